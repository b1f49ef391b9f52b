{#- The text of a JSONPath (or JSON Pointer) addressing `path`, a list of keys from the root, in
    the form the engine's path-taking functions read; not a literal yet (callers quote it with
    string_literal, and may extend it first). One spelling per engine, shared by
    json_extract_text and json_path_blocked, so both address the same value. An empty `path` is
    the document itself. -#}
{% macro _json_path(path) -%}
  {{ return(adapter.dispatch('_json_path', 'assay')(path)) }}
{%- endmacro %}

{#- SQL/JSON path with quoted keys. -#}
{% macro default___json_path(path) -%}
  {%- set steps = [] -%}
  {%- for k in path -%}{%- do steps.append('."' ~ (k | string | replace('\\', '\\\\') | replace('"', '\\"')) ~ '"') -%}{%- endfor -%}
  {{ return('$' ~ steps | join('')) }}
{%- endmacro %}

{#- JSON Pointer: '~' and '/' are the only characters it escapes. -#}
{% macro duckdb___json_path(path) -%}
  {%- set steps = [] -%}
  {%- for k in path -%}{%- do steps.append('/' ~ (k | string | replace('~', '~0') | replace('/', '~1'))) -%}{%- endfor -%}
  {{ return(steps | join('')) }}
{%- endmacro %}

{#- Spark's JSONPath reads bracketed, single-quoted keys. -#}
{% macro spark___json_path(path) -%}
  {%- set steps = [] -%}
  {%- for k in path -%}{%- do steps.append("['" ~ (k | string | replace("'", "\\'")) ~ "']") -%}{%- endfor -%}
  {{ return('$' ~ steps | join('')) }}
{%- endmacro %}

{% macro trino___json_path(path) -%}
  {%- set steps = [] -%}
  {%- for k in path -%}{%- do steps.append('["' ~ (k | string | replace('"', '\\"')) ~ '"]') -%}{%- endfor -%}
  {{ return('$' ~ steps | join('')) }}
{%- endmacro %}
