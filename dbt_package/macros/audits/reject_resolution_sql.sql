{#
  Marks the open reject rows that a published build admitted (now kept) or
  deduped (a better row won the key) as resolved. Run by the entity's
  materialization after the candidate is published, so a build refused by its
  audits never claims to have admitted anything. Resolved rows stay as audit
  history; nothing is deleted.

  Which source rows are resolved, and how, is decided by the generator
  (assay.lower.rejects.resolving_query): `resolving` is that query's text, one
  row per source row with `source_relation`, `mapping`, `_source_row_id` and `resolution`
  (a source row is one of a mapping: decision 0947).
  This macro only says how an engine stamps them: UPDATE, MERGE, or build beside
  and swap. Resolution leaves `last_seen`, `_load_id` and `failed_rules` alone:
  the row keeps its account of the last diversion (decision 0301); it stamps
  `last_run_id` with this run, the build that wrote the row last (decision 0944).
#}
{% macro reject_resolution_sql(reject, resolving) %}
  {{ return(adapter.dispatch('reject_resolution_sql', 'assay')(reject, resolving)) }}
{% endmacro %}

{% macro default__reject_resolution_sql(reject, resolving) %}
update {{ reject }}
set resolved_at = {{ assay.run_timestamp() }},
    resolution = s.resolution,
    last_evaluated_at = {{ assay.run_timestamp() }},
    last_run_id = {{ assay.string_literal(invocation_id) }}
from ({{ resolving }}) as s
where {{ reject }}.resolved_at is null
  and s._source_row_id = {{ reject }}._source_row_id
  and s.source_relation = {{ reject }}.source_relation
  and s.mapping = {{ reject }}.mapping
{% endmacro %}

{#- Spark: parquet tables take no UPDATE. On parquet the resolved reject table is built beside
    the old one and swapped in (assay._resolve_rejects_by_swap, run here, when the
    materialization asks for the statement after publishing), and the statement left to run is
    a no-op; Delta, Iceberg and Hudi resolve in place with MERGE. -#}
{% macro spark__reject_resolution_sql(reject, resolving) %}
  {%- if config.get('file_format', 'parquet') in ['delta', 'iceberg', 'hudi'] -%}
merge into {{ reject }} as r
using ({{ assay._resolving_rejects(resolving) }}) as s
on r.resolved_at is null and s._source_row_id = r._source_row_id and s.source_relation = r.source_relation and s.mapping = r.mapping
when matched then update set
  resolved_at = {{ assay.run_timestamp() }},
  resolution = s.resolution,
  last_evaluated_at = {{ assay.run_timestamp() }},
  last_run_id = {{ assay.string_literal(invocation_id) }}
  {%- else -%}
    {%- if execute -%}{%- do assay._resolve_rejects_by_swap(reject, resolving) -%}{%- endif -%}
select 1 as assay_rejects_resolved_by_swap
  {%- endif -%}
{% endmacro %}
