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

{% macro spark__to_utc(expr, zone_literal) -%}
  to_utc_timestamp(CAST({{ expr }} AS TIMESTAMP), {{ assay.string_literal(zone_literal) }})
{%- endmacro %}

{% macro trino__to_utc(expr, zone_literal) -%}
  CAST(with_timezone(CAST({{ expr }} AS timestamp(6)), {{ assay.string_literal(zone_literal) }}) AT TIME ZONE 'UTC' AS timestamp(6))
{%- endmacro %}
