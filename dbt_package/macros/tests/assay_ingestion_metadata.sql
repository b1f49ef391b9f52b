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
    argument makes the test wait for that model, not for the ledger it guards. -#}
{% test assay_ingestion_metadata(model, rows=none, ledger=none, loads=none) %}
  {{ return(adapter.dispatch('test_assay_ingestion_metadata', 'assay')(model, rows, ledger, loads)) }}
{% endtest %}

{% macro default__test_assay_ingestion_metadata(model, rows=none, ledger=none, loads=none) %}
{%- set row_id = assay._as_text('_source_row_id') -%}
{%- set bounded = assay._ingestion_rows(rows, ledger) -%}
with {% if bounded %}{{ bounded }},
{% endif -%}
metadata as (
  select _load_id, _ingested_at, _source_row_id from {{ 'assay_ingestion_rows' if bounded else model }}
)
select 'missing_metadata' as failure, {{ row_id }} as source_row_id
from metadata
where _load_id is null or _ingested_at is null or _source_row_id is null
union all
select 'duplicate_source_row_id' as failure, {{ row_id }} as source_row_id
from metadata
where _source_row_id is not null and _load_id is not null
group by _load_id, _source_row_id
having count(*) > 1
union all
select 'unparseable_ingested_at' as failure, {{ row_id }} as source_row_id
from metadata
where _ingested_at is not null and {{ assay.ingestion_timestamp('_ingested_at') }} is null
{% endmacro %}
