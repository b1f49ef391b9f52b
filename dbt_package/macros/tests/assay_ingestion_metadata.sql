{#- Blocking audit for every entity whose bronze carries the ingestion metadata. Dedupe and the
    delivery order read these columns, so a missing or unparseable value would make the surviving
    row arbitrary. A `_source_row_id` that repeats across loads is a re-delivery, which is normal
    (decision 0014: the latest delivery supersedes the earlier ones); only a repeat within one
    `_load_id` is corrupt ingestion, because then two deliveries of one source row tie.

    `rows` and `ledger` (decision 0408): where an incremental entity reads this relation, the
    generator's macro `rows` gives the rows to test, the loads its ledger model `ledger` does not
    prove clean; the verdict is the same as over all of bronze. Without them, or while that ledger
    is not built with fingerprints, the test reads all of bronze. `loads` (decision 0411) is a
    `ref` to the entity's per-load counts, which `rows` reads when this build made them: the
    argument makes the test wait for that model, not for the ledger it guards.

    `ranked` and `mappings` (decision 0412): where no ledger bounds the test, a `ref` to a staged
    relation rebuilt in full that ranks this relation's deliveries, and its mappings of it. A
    repeat within one load always has a delivery ranked after the first, so when this build made
    that relation, the repeat search groups only the source rows it ranks twice or more; the
    verdict is the same as over all of bronze. The `ref` makes the test run after that relation
    and before every node that reads it. -#}
{% test assay_ingestion_metadata(model, rows=none, ledger=none, loads=none, ranked=none, mappings=none) %}
  {{ return(adapter.dispatch('test_assay_ingestion_metadata', 'assay')(model, rows, ledger, loads, ranked, mappings)) }}
{% endtest %}

{% macro default__test_assay_ingestion_metadata(model, rows=none, ledger=none, loads=none, ranked=none, mappings=none) %}
{%- set row_id = assay._as_text('_source_row_id') -%}
{%- set bounded = assay._ingestion_rows(rows, ledger) -%}
{%- set redelivered = none -%}{%- set unparsed = none -%}
{%- if not bounded and ranked is not none and mappings and assay.built_this_run(ranked.identifier) -%}
  {%- set listed = [] -%}
  {%- for m in mappings | sort -%}{%- do listed.append(assay.string_literal(m)) -%}{%- endfor -%}
  {%- set ranks = "select r._source_row_id from " ~ ranked ~ " as r where r._mapping in (" ~ (listed | join(", ")) ~ ") and " -%}
  {#- Only a source row delivered twice has a delivery ranked after the first; only one whose
      parsed `_ingested_at` is NULL can hold a value that does not parse. -#}
  {%- set redelivered = ranks ~ "r._delivery_rank > 1" -%}
  {%- set unparsed = ranks ~ "r._ingested_at is null" -%}
{%- endif -%}
with {% if bounded %}{{ bounded }},
{% endif -%}
metadata as (
  select _load_id, _ingested_at, _source_row_id from {{ 'assay_ingestion_rows' if bounded else model }}
)
select 'missing_metadata' as failure, {{ row_id }} as source_row_id
from metadata
where _load_id is null or _ingested_at is null or _source_row_id is null
union all
select 'duplicate_source_row_id' as failure, source_row_id
from (
  {#- every row of a repeat is a violating row (decision 0956): a pair is two, not one finding #}
  select {{ row_id }} as source_row_id, count(*) over (partition by _load_id, _source_row_id) as deliveries
  from metadata
  where _source_row_id is not null and _load_id is not null
  {%- if redelivered %}
    and {{ row_id }} in ({{ redelivered }})
  {%- endif %}
) as repeats
where deliveries > 1
union all
select 'unparseable_ingested_at' as failure, {{ row_id }} as source_row_id
from metadata
where _ingested_at is not null
{#- In a CASE, so that no engine parses a row before the row is found a candidate #}
{%- if redelivered %}
  and case when _source_row_id is null or {{ row_id }} in ({{ unparsed }})
    then {{ assay.ingestion_timestamp('_ingested_at') }} is null else false end
{%- else %}
  and {{ assay.ingestion_timestamp('_ingested_at') }} is null
{%- endif %}
{% endmacro %}
