{% macro char_length(expr) -%}
  {{ return(adapter.dispatch('char_length', 'assay')(expr)) }}
{%- endmacro %}

{#- Code points, never bytes or grapheme clusters. -#}
{% macro default__char_length(expr) -%}
  CHAR_LENGTH({{ expr }})
{%- endmacro %}

{% macro duckdb__char_length(expr) -%}
  length({{ expr }})
{%- endmacro %}

{% macro snowflake__char_length(expr) -%}
  LENGTH({{ expr }})
{%- endmacro %}

{% macro trino__char_length(expr) -%}
  length({{ expr }})
{%- endmacro %}
