{% macro charset_violates(expr, ranges, mode) -%}
  {{ return(adapter.dispatch('charset_violates', 'assay')(expr, ranges, mode)) }}
{%- endmacro %}

{#- RE2 (DuckDB, BigQuery), Java (Spark), Joni (Trino), PCRE (Redshift) all read \x{...}. -#}
{% macro default__charset_violates(expr, ranges, mode) -%}
  {{ return(assay._charset_violates(expr, ranges, mode, '\\x{%X}')) }}
{%- endmacro %}

{% macro postgres__charset_violates(expr, ranges, mode) -%}
  {{ return(assay._charset_violates(expr, ranges, mode, '\\U%08X')) }}
{%- endmacro %}

{% macro redshift__charset_violates(expr, ranges, mode) -%}
  {{ return(assay.default__charset_violates(expr, ranges, mode)) }}
{%- endmacro %}

{#- Snowflake's POSIX classes take no code point escapes: the characters go in as themselves
    ('%c'), the class metacharacters escaped, and NUL cannot appear in a literal at all. -#}
{% macro snowflake__charset_violates(expr, ranges, mode) -%}
  {%- set clean = assay._charset_ranges(ranges, 1) -%}
  {%- set ns = namespace(members='') -%}
  {%- for r in clean -%}
    {%- for cp in ([r[0], r[1]] if r[1] > r[0] else [r[0]]) -%}
      {%- set ch = '%c' | format(cp) -%}
      {%- set ns.members = ns.members ~ ('\\' if ch in '\\]^-[' else '') ~ ch ~ ('-' if (loop.first and r[1] > r[0]) else '') -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if not clean -%}
    {{ return(assay._charset_violates(expr, [], mode, '')) }}
  {%- endif -%}
  {{ return(assay.regex_matches(expr, '[' ~ ('^' if mode == 'allow' else '') ~ ns.members ~ ']')) }}
{%- endmacro %}
