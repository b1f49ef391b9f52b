{#- A timestamp moved by a number of minutes (an ISO 8601 offset taken back to UTC, an
    incremental window's lag), its fraction of a second kept. dbt's `dateadd` does this on every engine but Spark: dbt-spark's
    `spark__dateadd` goes through `to_unix_timestamp`, whole seconds, so `12:30:45.123456Z` was
    read as 12:30:45 there and a fractional `_ingested_at` lost the order DuckDB dedupes by. -#}
{% macro _shift_minutes(ts, minutes) -%}
  {{ return(adapter.dispatch('_shift_minutes', 'assay')(ts, minutes)) }}
{%- endmacro %}

{% macro default___shift_minutes(ts, minutes) -%}
  {{ return(dbt.dateadd('minute', minutes, ts)) }}
{%- endmacro %}

{#- Spark 3.3+ and Databricks: timestampadd keeps the microseconds. -#}
{% macro spark___shift_minutes(ts, minutes) -%}
  {{ return('timestampadd(MINUTE, ' ~ minutes ~ ', ' ~ ts ~ ')') }}
{%- endmacro %}
