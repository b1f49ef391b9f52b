{% macro regex_extract(expr, pattern_literal, group=0) -%}
  {{ return(adapter.dispatch('regex_extract', 'assay')(expr, pattern_literal, group)) }}
{%- endmacro %}

{% macro default__regex_extract(expr, pattern_literal, group=0) -%}
  regexp_extract({{ expr }}, {{ assay.string_literal(pattern_literal) }}, {{ group | int }})
{%- endmacro %}

{#- regexp_extract returns '' rather than NULL when nothing matches. -#}
{% macro duckdb__regex_extract(expr, pattern_literal, group=0) -%}
  {%- set p = assay.string_literal(pattern_literal) -%}
  CASE WHEN regexp_matches({{ expr }}, {{ p }}) THEN regexp_extract({{ expr }}, {{ p }}, {{ group | int }}) END
{%- endmacro %}

{#- regexp_match returns only the captures (or the whole match when there are none), so
    group 0 is made group 1 by wrapping the pattern. -#}
{% macro postgres__regex_extract(expr, pattern_literal, group=0) -%}
  {%- if group | int == 0 -%}
    (regexp_match({{ expr }}, {{ assay.string_literal('(' ~ pattern_literal ~ ')') }}))[1]
  {%- else -%}
    (regexp_match({{ expr }}, {{ assay.string_literal(pattern_literal) }}))[{{ group | int }}]
  {%- endif -%}
{%- endmacro %}

{#- The 'e' flag returns the first group only, so every other group is made non-capturing;
    no match gives '' rather than NULL. -#}
{% macro redshift__regex_extract(expr, pattern_literal, group=0) -%}
  {%- set rewritten = assay._regex_groups(pattern_literal, group | int) -%}
  {%- set flags = "'pe'" if group | int else "'p'" -%}
  CASE WHEN {{ assay.regex_matches(expr, pattern_literal) }}
  THEN REGEXP_SUBSTR({{ expr }}, {{ assay.string_literal(rewritten.pattern) }}, 1, 1, {{ flags }}) END
{%- endmacro %}

{% macro snowflake__regex_extract(expr, pattern_literal, group=0) -%}
  {%- set rewritten = assay._regex_groups(pattern_literal, group | int, true) -%}
  {%- if group | int == 0 -%}
    REGEXP_SUBSTR({{ expr }}, {{ assay.string_literal(rewritten.pattern) }})
  {%- else -%}
    REGEXP_SUBSTR({{ expr }}, {{ assay.string_literal(rewritten.pattern) }}, 1, 1, 'e', {{ rewritten.group }})
  {%- endif -%}
{%- endmacro %}

{#- REGEXP_EXTRACT allows at most one capturing group. -#}
{% macro bigquery__regex_extract(expr, pattern_literal, group=0) -%}
  {%- set rewritten = assay._regex_groups(pattern_literal, group | int) -%}
  REGEXP_EXTRACT({{ expr }}, {{ assay.string_literal(rewritten.pattern) }})
{%- endmacro %}

{#- regexp_extract returns '' rather than NULL when nothing matches. -#}
{% macro spark__regex_extract(expr, pattern_literal, group=0) -%}
  {%- set p = assay.string_literal(pattern_literal) -%}
  CASE WHEN {{ expr }} RLIKE {{ p }} THEN regexp_extract({{ expr }}, {{ p }}, {{ group | int }}) END
{%- endmacro %}

{% macro trino__regex_extract(expr, pattern_literal, group=0) -%}
  regexp_extract({{ expr }}, {{ assay.string_literal(pattern_literal) }}, {{ group | int }})
{%- endmacro %}
