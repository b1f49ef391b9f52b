{% macro flags_contain(flags_expr, rule_name_literal) -%}
  {{ return(adapter.dispatch('flags_contain', 'assay')(flags_expr, rule_name_literal)) }}
{%- endmacro %}

{#- Delimiters on both sides so that rule 'a' is not found inside 'a_b'; POSITION rather than
    LIKE because '_' is a LIKE wildcard and rule names are full of it. -#}
{% macro default__flags_contain(flags_expr, rule_name_literal) -%}
  (POSITION({{ assay.string_literal(',' ~ rule_name_literal ~ ',') }} IN (',' || {{ flags_expr }} || ',')) > 0)
{%- endmacro %}

{% macro redshift__flags_contain(flags_expr, rule_name_literal) -%}
  {{ return(assay.default__flags_contain(flags_expr, rule_name_literal)) }}
{%- endmacro %}

{% macro duckdb__flags_contain(flags_expr, rule_name_literal) -%}
  list_contains({{ flags_expr }}, {{ assay.string_literal(rule_name_literal) }})
{%- endmacro %}

{% macro postgres__flags_contain(flags_expr, rule_name_literal) -%}
  ({{ assay.string_literal(rule_name_literal) }} = ANY({{ flags_expr }}))
{%- endmacro %}

{% macro snowflake__flags_contain(flags_expr, rule_name_literal) -%}
  ARRAY_CONTAINS({{ assay.string_literal(rule_name_literal) }}::VARIANT, {{ flags_expr }})
{%- endmacro %}

{% macro bigquery__flags_contain(flags_expr, rule_name_literal) -%}
  ({{ assay.string_literal(rule_name_literal) }} IN UNNEST({{ flags_expr }}))
{%- endmacro %}

{% macro spark__flags_contain(flags_expr, rule_name_literal) -%}
  array_contains({{ flags_expr }}, {{ assay.string_literal(rule_name_literal) }})
{%- endmacro %}

{% macro trino__flags_contain(flags_expr, rule_name_literal) -%}
  contains({{ flags_expr }}, {{ assay.string_literal(rule_name_literal) }})
{%- endmacro %}
