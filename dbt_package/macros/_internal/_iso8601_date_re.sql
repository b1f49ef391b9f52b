{#- ISO 8601 pieces shared by parse_ts and parse_date. Ranges are spelled out because engines
    roll over what they should refuse (Postgres reads 23:59:60 as the next minute) and year 0
    exists on DuckDB only. Day-of-month validity (2025-02-30) is left to the guarded cast. -#}
{% macro _iso8601_date_re() -%}
  ((?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01]))
{%- endmacro %}
