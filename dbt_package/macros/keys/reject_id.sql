{% macro reject_id(source_relation_literal, source_row_id_expr, mapping_literal=none) -%}
  {{ return(adapter.dispatch('reject_id', 'assay')(source_relation_literal, source_row_id_expr, mapping_literal)) }}
{%- endmacro %}

{#- _load_id stays out: a re-delivery of the same source row must land on the same reject
    row, or replay stops being idempotent. -#}
{% macro default__reject_id(source_relation_literal, source_row_id_expr, mapping_literal=none) -%}
  md5({{ assay._reject_id_prefix(source_relation_literal, mapping_literal) }} || {{ assay._as_text(source_row_id_expr) }})
{%- endmacro %}

{% macro bigquery__reject_id(source_relation_literal, source_row_id_expr, mapping_literal=none) -%}
  TO_HEX(MD5(CONCAT({{ assay._reject_id_prefix(source_relation_literal, mapping_literal) }}, {{ assay._as_text(source_row_id_expr) }})))
{%- endmacro %}

{% macro spark__reject_id(source_relation_literal, source_row_id_expr, mapping_literal=none) -%}
  md5(concat({{ assay._reject_id_prefix(source_relation_literal, mapping_literal) }}, {{ assay._as_text(source_row_id_expr) }}))
{%- endmacro %}

{% macro trino__reject_id(source_relation_literal, source_row_id_expr, mapping_literal=none) -%}
  lower(to_hex(md5(to_utf8({{ assay._reject_id_prefix(source_relation_literal, mapping_literal) }} || {{ assay._as_text(source_row_id_expr) }}))))
{%- endmacro %}
