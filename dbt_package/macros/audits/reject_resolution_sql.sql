{#
  Marks the open reject rows that a published build admitted (now kept) or
  deduped (a better row won the key) as resolved. Run by the entity's
  materialization after the candidate is published, so a build refused by its
  audits never claims to have admitted anything. Resolved rows stay as audit
  history; nothing is deleted.

  Only the latest delivery of a source row (`_delivery_rank = 1`) speaks for
  it (decision 0014): an earlier delivery is superseded, routed `deduped`, and
  never resolves anything. Resolution leaves `last_seen`, `_load_id` and
  `failed_rules` alone: the row keeps its account of the last diversion (decision 0301).
#}
{% macro reject_resolution_sql(reject, staged, mappings) %}
  {{ return(adapter.dispatch('reject_resolution_sql', 'assay')(reject, staged, mappings)) }}
{% endmacro %}

{% macro default__reject_resolution_sql(reject, staged, mappings) %}
update {{ reject }}
set resolved_at = {{ assay.run_timestamp() }},
    resolution = case when s._route = 'deduped' then 'deduped' else 'admitted' end,
    last_evaluated_at = {{ assay.run_timestamp() }}
from {{ staged }} as s
where {{ reject }}.resolved_at is null
  and s._delivery_rank = 1
  and s._route in ('kept', 'deduped')
  and s._source_row_id = {{ reject }}._source_row_id
  and {{ reject }}.source_relation = case s._mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end
{% endmacro %}

{#- Spark: parquet tables take no UPDATE. On parquet the resolved reject table is built beside
    the old one and swapped in (assay._resolve_rejects_by_swap, run here, when the
    materialization asks for the statement after publishing), and the statement left to run is
    a no-op; Delta, Iceberg and Hudi resolve in place with MERGE. -#}
{% macro spark__reject_resolution_sql(reject, staged, mappings) %}
  {%- if config.get('file_format', 'parquet') in ['delta', 'iceberg', 'hudi'] -%}
merge into {{ reject }} as r
using ({{ assay._resolving_rejects(staged, mappings) }}) as s
on r.resolved_at is null and s._source_row_id = r._source_row_id and s.source_relation = r.source_relation
when matched then update set
  resolved_at = {{ assay.run_timestamp() }},
  resolution = s.resolution,
  last_evaluated_at = {{ assay.run_timestamp() }}
  {%- else -%}
    {%- if execute -%}{%- do assay._resolve_rejects_by_swap(reject, staged, mappings) -%}{%- endif -%}
select 1 as assay_rejects_resolved_by_swap
  {%- endif -%}
{% endmacro %}
