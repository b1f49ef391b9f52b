{% macro charset_violates(expr, ranges, mode) -%}
  {{ return(adapter.dispatch('charset_violates', 'assay')(expr, ranges, mode)) }}
{%- endmacro %}

{#- [lo, hi] pairs -> clean ranges: clipped to Unicode scalar values, surrogates cut out (no
    engine accepts them in a class and no valid text contains them), NUL dropped where
    `min_cp` says the engine cannot name it. -#}
{% macro _charset_ranges(ranges, min_cp=0) %}
  {%- set out = [] -%}
  {%- for r in ranges -%}
    {%- set lo = [r[0] | int, min_cp] | max -%}
    {%- set hi = [r[1] | int, 1114111] | min -%}
    {%- for piece in [[lo, [hi, 55295] | min], [[lo, 57344] | max, hi]] -%}
      {%- if piece[0] <= piece[1] -%}{%- do out.append(piece) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}

{#- `escape` formats one code point for the engine's regex, e.g. '\\x{%X}'. -#}
{% macro _charset_violates(expr, ranges, mode, escape, min_cp=0) %}
  {%- if mode not in ['forbid', 'allow'] -%}
    {{ exceptions.raise_compiler_error("assay.charset_violates: mode must be 'forbid' or 'allow', got " ~ mode) }}
  {%- endif -%}
  {%- set clean = assay._charset_ranges(ranges, min_cp) -%}
  {%- if not clean -%}
    {#- nothing listed: forbid can never fire, allow fires on any character -#}
    {{ return('(' ~ assay.char_length(expr) ~ ' > 0)' if mode == 'allow'
              else '(CASE WHEN ' ~ expr ~ ' IS NOT NULL THEN FALSE END)') }}
  {%- endif -%}
  {%- set members = [] -%}
  {%- for r in clean -%}
    {%- do members.append((escape | format(r[0])) ~ ('-' ~ (escape | format(r[1])) if r[1] > r[0] else '')) -%}
  {%- endfor -%}
  {%- set cls = '[' ~ ('^' if mode == 'allow' else '') ~ (members | join('')) ~ ']' -%}
  {{ return(assay.regex_matches(expr, cls)) }}
{% endmacro %}

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
