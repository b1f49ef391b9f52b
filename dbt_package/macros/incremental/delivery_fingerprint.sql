{#
  A 64-bit fingerprint of one bronze delivery, from its raw `_source_row_id` and
  `_ingested_at` as bronze stores them (no parse). An incremental entity's ledger
  keeps it per row (`_bronze_fp`), so that a build can tell, per load, that
  bronze still holds exactly the deliveries the ledger processed (same count,
  same sum of fingerprints) without transforming or joining that load's rows
  (decision 0406). NULL and the empty string fingerprint differently, and the
  two values cannot run into each other (each is written with its length).
#}
{% macro delivery_fingerprint(source_row_id, ingested_at) -%}
  {{ return(adapter.dispatch('delivery_fingerprint', 'assay')(source_row_id, ingested_at)) }}
{%- endmacro %}

{% macro default__delivery_fingerprint(source_row_id, ingested_at) -%}
  {%- set parts = [] -%}
  {%- for value in [source_row_id, ingested_at] -%}
    {%- set text = 'cast(' ~ value ~ ' as ' ~ assay.sql_type('string') ~ ')' -%}
    {%- do parts.append("coalesce(cast(length(" ~ text ~ ") as " ~ assay.sql_type('string') ~ ") || ':' || " ~ text ~ ", '-')") -%}
  {%- endfor -%}
  hashtextextended({{ parts | join(" || '|' || ") }}, 0)
{%- endmacro %}

{#- DuckDB hashes a row of values natively; NULL has its own hash. -#}
{% macro duckdb__delivery_fingerprint(source_row_id, ingested_at) -%}
  hash(cast({{ source_row_id }} as varchar), cast({{ ingested_at }} as varchar))
{%- endmacro %}

{% macro spark__delivery_fingerprint(source_row_id, ingested_at) -%}
  {%- set parts = [] -%}
  {%- for value in [source_row_id, ingested_at] -%}
    {%- set text = 'cast(' ~ value ~ ' as string)' -%}
    {%- do parts.append("coalesce(concat(cast(length(" ~ text ~ ") as string), ':', " ~ text ~ "), '-')") -%}
  {%- endfor -%}
  xxhash64(concat({{ parts | join(", '|', ") }}))
{%- endmacro %}
