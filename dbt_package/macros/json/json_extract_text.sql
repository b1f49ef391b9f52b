{% macro json_extract_text(json_expr, path) -%}
  {{ return(adapter.dispatch('json_extract_text', 'assay')(json_expr, path)) }}
{%- endmacro %}

{#- `path` is a list of keys; each engine gets them in a form that needs no escaping of the
    key text beyond string_literal (quotes) or its own path syntax (_json_path, or noted per
    engine). -#}
{% macro default__json_extract_text(json_expr, path) -%}
  JSON_VALUE({{ json_expr }}, {{ assay.string_literal(assay._json_path(path)) }})
{%- endmacro %}

{% macro duckdb__json_extract_text(json_expr, path) -%}
  json_extract_string({{ json_expr }}, {{ assay.string_literal(assay._json_path(path)) }})
{%- endmacro %}

{#- A text[] path: keys need no escaping at all. -#}
{% macro postgres__json_extract_text(json_expr, path) -%}
  {%- set keys = [] -%}
  {%- for k in path -%}{%- do keys.append(assay.string_literal(k)) -%}{%- endfor -%}
  (CAST({{ json_expr }} AS json) #>> ARRAY[{{ keys | join(', ') }}]::text[])
{%- endmacro %}

{#- Trailing true: NULL instead of an error on invalid JSON. -#}
{% macro redshift__json_extract_text(json_expr, path) -%}
  {%- set keys = [] -%}
  {%- for k in path -%}{%- do keys.append(assay.string_literal(k)) -%}{%- endfor -%}
  JSON_EXTRACT_PATH_TEXT({{ json_expr }}, {{ keys | join(', ') }}, true)
{%- endmacro %}

{% macro snowflake__json_extract_text(json_expr, path) -%}
  {%- set steps = [] -%}
  {%- for k in path -%}{%- do steps.append('[' ~ assay.string_literal(k) ~ ']') -%}{%- endfor -%}
  TRY_PARSE_JSON({{ json_expr }}){{ steps | join('') }}::VARCHAR
{%- endmacro %}

{% macro bigquery__json_extract_text(json_expr, path) -%}
  {{ return(assay.default__json_extract_text(json_expr, path)) }}
{%- endmacro %}

{% macro spark__json_extract_text(json_expr, path) -%}
  get_json_object({{ json_expr }}, {{ assay.string_literal(assay._json_path(path)) }})
{%- endmacro %}

{% macro trino__json_extract_text(json_expr, path) -%}
  json_extract_scalar({{ json_expr }}, {{ assay.string_literal(assay._json_path(path)) }})
{%- endmacro %}
