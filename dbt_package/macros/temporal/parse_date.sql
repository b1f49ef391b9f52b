{% macro parse_date(expr, format_literal) -%}
  {{ return(adapter.dispatch('parse_date', 'assay')(expr, format_literal)) }}
{%- endmacro %}

{#- Engines differ only inside parse_ts / try_cast, which this builds on. -#}
{% macro default__parse_date(expr, format_literal) -%}
  {%- if format_literal == 'ISO8601' -%}
    {%- set s = assay._as_text(expr) -%}
    CASE WHEN {{ assay.regex_matches(s, '^' ~ assay._iso8601_date_re() ~ '$') }} THEN {{ assay.try_cast(s, 'date') }} END
  {%- elif format_literal == 'ISO8601_INSTANT' -%}
    {{ exceptions.raise_compiler_error("assay.parse_date: a date has no instant; use ISO8601") }}
  {%- else -%}
    CAST({{ assay.parse_ts(expr, format_literal) }} AS {{ assay.sql_type('date') }})
  {%- endif -%}
{%- endmacro %}
