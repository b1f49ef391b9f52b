{% macro quality_ok(flags_expr) -%}
  {{ return(adapter.dispatch('quality_ok', 'assay')(flags_expr)) }}
{%- endmacro %}

{% macro default__quality_ok(flags_expr) -%}
  ({{ flags_expr }} = '')
{%- endmacro %}

{% macro redshift__quality_ok(flags_expr) -%}
  {{ return(assay.default__quality_ok(flags_expr)) }}
{%- endmacro %}

{% macro duckdb__quality_ok(flags_expr) -%}
  (len({{ flags_expr }}) = 0)
{%- endmacro %}

{% macro postgres__quality_ok(flags_expr) -%}
  (cardinality({{ flags_expr }}) = 0)
{%- endmacro %}

{% macro snowflake__quality_ok(flags_expr) -%}
  (ARRAY_SIZE({{ flags_expr }}) = 0)
{%- endmacro %}

{% macro bigquery__quality_ok(flags_expr) -%}
  (ARRAY_LENGTH({{ flags_expr }}) = 0)
{%- endmacro %}

{% macro spark__quality_ok(flags_expr) -%}
  (size({{ flags_expr }}) = 0)
{%- endmacro %}

{% macro trino__quality_ok(flags_expr) -%}
  (cardinality({{ flags_expr }}) = 0)
{%- endmacro %}
