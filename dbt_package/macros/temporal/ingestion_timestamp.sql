{#
  `_ingested_at` as an instant: zoneless UTC timestamp. Text with an offset
  (`13:00+03:00`) is converted to UTC rather than having its offset dropped, so
  deliveries order by when they happened; a typed timestamp column reads the
  same through its text form. NULL when the value is no ISO 8601 timestamp.
  The dedupe order, the ingestion audit and the reject table's first_seen and
  last_seen all read `_ingested_at` through this one macro.
#}
{% macro ingestion_timestamp(expr) -%}
  {{ return(adapter.dispatch('ingestion_timestamp', 'assay')(expr)) }}
{%- endmacro %}

{% macro default__ingestion_timestamp(expr) -%}
  {{ return(assay.parse_ts(expr, 'ISO8601')) }}
{%- endmacro %}
