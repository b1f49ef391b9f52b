{% macro reject_id(source_relation_literal, source_row_id_expr) -%}
  {{ return(adapter.dispatch('reject_id', 'assay')(source_relation_literal, source_row_id_expr)) }}
{%- endmacro %}

{#- _load_id stays out: a re-delivery of the same source row must land on the same reject
    row, or replay stops being idempotent. -#}
{% macro default__reject_id(source_relation_literal, source_row_id_expr) -%}
  md5({{ assay.string_literal(source_relation_literal ~ '|') }} || {{ assay._as_text(source_row_id_expr) }})
{%- endmacro %}

{% macro bigquery__reject_id(source_relation_literal, source_row_id_expr) -%}
  TO_HEX(MD5(CONCAT({{ assay.string_literal(source_relation_literal ~ '|') }}, {{ assay._as_text(source_row_id_expr) }})))
{%- endmacro %}

{% macro spark__reject_id(source_relation_literal, source_row_id_expr) -%}
  md5(concat({{ assay.string_literal(source_relation_literal ~ '|') }}, {{ assay._as_text(source_row_id_expr) }}))
{%- endmacro %}

{% macro trino__reject_id(source_relation_literal, source_row_id_expr) -%}
  lower(to_hex(md5(to_utf8({{ assay.string_literal(source_relation_literal ~ '|') }} || {{ assay._as_text(source_row_id_expr) }}))))
{%- endmacro %}
