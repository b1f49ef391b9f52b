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
