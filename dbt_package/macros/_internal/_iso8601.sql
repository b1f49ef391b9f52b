{#- ISO 8601 pieces shared by parse_ts and parse_date. Ranges are spelled out because engines
    roll over what they should refuse (Postgres reads 23:59:60 as the next minute) and year 0
    exists on DuckDB only. Day-of-month validity (2025-02-30) is left to the guarded cast. -#}
{% macro _iso8601_date_re() -%}
  ((?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))
{%- endmacro %}

{#- Groups: 1 date, 2 time, 3 'Z', 4 offset sign, 5 offset hours, 6 offset minutes. -#}
{% macro _iso8601_ts_re(zone_required) -%}
  {%- set time_re = '((?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,6})?)?)' -%}
  {%- set zone_re = '(?:(Z)|([+-])([01][0-9]|2[0-3])(?::([0-5][0-9]))?)' -%}
  {%- if zone_required -%}
    ^{{ assay._iso8601_date_re() }}[T ]{{ time_re }}{{ zone_re }}$
  {%- else -%}
    ^{{ assay._iso8601_date_re() }}(?:[T ]{{ time_re }}{{ zone_re }}?)?$
  {%- endif -%}
{%- endmacro %}
