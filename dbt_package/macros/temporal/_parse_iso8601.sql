{% macro _parse_iso8601(expr, zone_required) %}
  {%- set s = assay._as_text(expr) -%}
  {%- set re = assay._iso8601_ts_re(zone_required) -%}
  {%- set g = {} -%}
  {%- for n in range(1, 7) -%}
    {#- NULLIF: DuckDB and Spark give '' for a group that did not take part -#}
    {%- do g.update({n: 'NULLIF(' ~ assay.regex_extract(s, re, n) ~ ", '')"}) -%}
  {%- endfor -%}
  {%- set int_type = assay.sql_type('int') -%}
  {#- 'HH:MM:SS.ffffff' is 15 characters: a longer fraction is cut to microseconds, as DuckDB and
      Spark read it, where PostgreSQL would round (23:59:59.9999999 into the next day; decision 0983). -#}
  {%- set local_ts = assay.try_cast(g[1] ~ " || ' ' || COALESCE(SUBSTR(" ~ g[2] ~ ", 1, 15), '00:00:00')", 'timestamp') -%}
  {%- set offset_minutes = "(CASE WHEN " ~ g[4] ~ " = '-' THEN -1 ELSE 1 END) * (CAST(COALESCE(" ~ g[5]
      ~ ", '0') AS " ~ int_type ~ ") * 60 + CAST(COALESCE(" ~ g[6] ~ ", '0') AS " ~ int_type ~ "))" -%}
  CASE WHEN {{ assay.regex_matches(s, re) }} THEN {{ assay._shift_minutes(local_ts, '-1 * ' ~ offset_minutes) }} END
{% endmacro %}
