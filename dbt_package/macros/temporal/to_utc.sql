{% macro to_utc(expr, zone_literal) -%}
  {{ return(adapter.dispatch('to_utc', 'assay')(expr, zone_literal)) }}
{%- endmacro %}

{#- AT TIME ZONE twice: local wall clock in `zone` -> instant -> UTC wall clock (Postgres,
    and Redshift, which inherits this). -#}
{% macro default__to_utc(expr, zone_literal) -%}
  ((CAST({{ expr }} AS {{ assay.sql_type('timestamp') }}) AT TIME ZONE {{ assay.string_literal(zone_literal) }}) AT TIME ZONE 'UTC')
{%- endmacro %}

{#- timezone() on a TIMESTAMP reads it as local to the zone; on the resulting TIMESTAMPTZ it
    gives the wall clock there, independent of the session TimeZone. -#}
{% macro duckdb__to_utc(expr, zone_literal) -%}
  timezone('UTC', timezone({{ assay.string_literal(zone_literal) }}, CAST({{ expr }} AS TIMESTAMP)))
{%- endmacro %}

{% macro snowflake__to_utc(expr, zone_literal) -%}
  CONVERT_TIMEZONE({{ assay.string_literal(zone_literal) }}, 'UTC', CAST({{ expr }} AS TIMESTAMP_NTZ))
{%- endmacro %}

{% macro bigquery__to_utc(expr, zone_literal) -%}
  DATETIME(TIMESTAMP(CAST({{ expr }} AS DATETIME), {{ assay.string_literal(zone_literal) }}), 'UTC')
{%- endmacro %}

{#- to_utc_timestamp reads a local time the clocks show twice (the hour after a fall-back) at the
    earlier, summer offset; DuckDB and PostgreSQL at the later one, after the change. The later
    reading is taken where there is one (decision 0993): the local time less the zone's offset six
    hours after the earlier reading, when that is a later instant that reads back as the same local
    time. Anywhere else (no repeated hour near, or a time the spring change skips) it is the earlier. -#}
{% macro spark__to_utc(expr, zone_literal) -%}
  {%- set z = assay.string_literal(zone_literal) -%}
  {%- set x = 'CAST(' ~ expr ~ ' AS TIMESTAMP)' -%}
  {%- set early = 'to_utc_timestamp(' ~ x ~ ', ' ~ z ~ ')' -%}
  {%- set after = '(' ~ early ~ ' + INTERVAL 6 HOURS)' -%}
  {%- set late = 'timestamp_micros(unix_micros(' ~ x ~ ') - (unix_micros(from_utc_timestamp(' ~ after ~ ', ' ~ z ~ ')) - unix_micros(' ~ after ~ ')))' -%}
  CASE WHEN {{ late }} > {{ early }} AND from_utc_timestamp({{ late }}, {{ z }}) = {{ x }} THEN {{ late }} ELSE {{ early }} END
{%- endmacro %}

{% macro trino__to_utc(expr, zone_literal) -%}
  CAST(with_timezone(CAST({{ expr }} AS timestamp(6)), {{ assay.string_literal(zone_literal) }}) AT TIME ZONE 'UTC' AS timestamp(6))
{%- endmacro %}
