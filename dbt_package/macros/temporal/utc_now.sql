{#- The current instant as a zoneless UTC timestamp, whatever the session's time zone: the time
    assay writes when it records a check result or an event (decision 0992). A plain
    `cast(current_timestamp as timestamp)` is the session's wall clock on DuckDB (whose TimeZone
    defaults to the machine's) and PostgreSQL (the server's or the database's `timezone`). -#}
{% macro utc_now() -%}
  {{ return(adapter.dispatch('utc_now', 'assay')()) }}
{%- endmacro %}

{#- DuckDB, PostgreSQL, Redshift, Trino: AT TIME ZONE on the instant gives its wall clock in UTC. -#}
{% macro default__utc_now() -%}
  cast(current_timestamp at time zone 'UTC' as {{ assay.sql_type('timestamp') }})
{%- endmacro %}

{% macro snowflake__utc_now() -%}
  cast(convert_timezone('UTC', current_timestamp()) as {{ assay.sql_type('timestamp') }})
{%- endmacro %}

{% macro bigquery__utc_now() -%}
  current_datetime('UTC')
{%- endmacro %}

{#- Spark's TIMESTAMP is an instant, stored as one whatever the session's zone; the profiles read
    it in UTC (spark.sql.session.timeZone, decision 0806). -#}
{% macro spark__utc_now() -%}
  cast(current_timestamp() as {{ assay.sql_type('timestamp') }})
{%- endmacro %}
