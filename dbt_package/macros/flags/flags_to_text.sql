{% macro flags_to_text(flags_expr) -%}
  {{ return(adapter.dispatch('flags_to_text', 'assay')(flags_expr)) }}
{%- endmacro %}

{#- The string form already is the text. -#}
{% macro default__flags_to_text(flags_expr) -%}
  {{ flags_expr }}
{%- endmacro %}

{% macro redshift__flags_to_text(flags_expr) -%}
  {{ return(assay.default__flags_to_text(flags_expr)) }}
{%- endmacro %}

{% macro duckdb__flags_to_text(flags_expr) -%}
  array_to_string({{ flags_expr }}, ',')
{%- endmacro %}

{% macro postgres__flags_to_text(flags_expr) -%}
  array_to_string({{ flags_expr }}, ',')
{%- endmacro %}

{% macro snowflake__flags_to_text(flags_expr) -%}
  ARRAY_TO_STRING({{ flags_expr }}, ',')
{%- endmacro %}

{% macro bigquery__flags_to_text(flags_expr) -%}
  ARRAY_TO_STRING({{ flags_expr }}, ',')
{%- endmacro %}

{% macro spark__flags_to_text(flags_expr) -%}
  array_join({{ flags_expr }}, ',')
{%- endmacro %}

{% macro trino__flags_to_text(flags_expr) -%}
  array_join({{ flags_expr }}, ',')
{%- endmacro %}
