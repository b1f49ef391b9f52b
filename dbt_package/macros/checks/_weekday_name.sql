{#- The weekday of a date's text (`2026-02-18...`: its first ten characters) in English, or none
    for text that is no date (assay.checks.anomaly._learnt reads it the same way). -#}
{% macro _weekday_name(text) %}
  {%- set found = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})$', (text ~ '')[:10]) if text else none -%}
  {%- if found is none -%}{{ return(none) }}{%- endif -%}
  {%- set y, mo, d = found.group(1) | int, found.group(2) | int, found.group(3) | int -%}
  {%- set leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 -%}
  {%- set days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] -%}
  {%- if y < 1 or mo < 1 or mo > 12 or d < 1 or d > days[mo - 1] -%}{{ return(none) }}{%- endif -%}
  {{ return(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][modules.datetime.date(y, mo, d).weekday()]) }}
{% endmacro %}
