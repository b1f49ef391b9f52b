{#- `trim`: leading and trailing white space removed, the same characters on every engine. -#}
{% macro trim_white_space(expr) -%}
  {{ return(adapter.dispatch('trim_white_space', 'assay')(expr)) }}
{%- endmacro %}

{#- SQL's TRIM(BOTH ... FROM ...): DuckDB, PostgreSQL, Spark, Trino, Redshift. -#}
{% macro default__trim_white_space(expr) -%}
  TRIM(BOTH {{ assay.string_literal(assay._white_space()) }} FROM {{ expr }})
{%- endmacro %}

{% macro snowflake__trim_white_space(expr) -%}
  TRIM({{ expr }}, {{ assay.string_literal(assay._white_space()) }})
{%- endmacro %}

{% macro bigquery__trim_white_space(expr) -%}
  TRIM({{ expr }}, {{ assay.string_literal(assay._white_space()) }})
{%- endmacro %}
