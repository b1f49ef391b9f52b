{#-
  Reject resolution where tables cannot be updated (Spark parquet): the reject table with the
  open rows this build resolves stamped (resolved_at, resolution, last_evaluated_at, last_run_id) is
  written beside it, then swapped in (assay._swap_in). Same rows and values as
  default__reject_resolution_sql's UPDATE.

  Most builds resolve nothing, and then that copy would be the stored table again, written in
  full: so the open rows this build resolves are counted first (one read of the reject table
  and the resolving rows, no write) and nothing is written when there are none.
-#}
{% macro _resolve_rejects_by_swap(reject, resolving) %}
  {%- set stored = adapter.get_relation(database=reject.database, schema=reject.schema, identifier=reject.identifier) -%}
  {%- if stored is none -%}{{ return(none) }}{%- endif -%}
  {%- set matched -%}
from {{ stored }} as r
join ({{ assay._resolving_rejects(resolving) }}) as s
  on r.resolved_at is null and s._source_row_id = r._source_row_id and s.source_relation = r.source_relation and s.mapping = r.mapping
  {%- endset -%}
  {%- if run_query('select count(*) as resolved ' ~ matched).columns[0].values()[0] | int == 0 -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set cols = adapter.get_columns_in_relation(stored) | map(attribute='name') | list -%}
  {%- set now = assay.run_timestamp() -%}
  {%- set hit = 'r.resolved_at is null and s._source_row_id is not null' -%}
  {%- set out = [] -%}
  {%- for c in cols -%}
    {%- if c | lower == 'resolved_at' -%}
      {%- do out.append('case when ' ~ hit ~ ' then ' ~ now ~ ' else r.resolved_at end as resolved_at') -%}
    {%- elif c | lower == 'resolution' -%}
      {%- do out.append('case when ' ~ hit ~ ' then s.resolution else r.resolution end as resolution') -%}
    {%- elif c | lower == 'last_evaluated_at' -%}
      {%- do out.append('case when ' ~ hit ~ ' then ' ~ now ~ ' else r.last_evaluated_at end as last_evaluated_at') -%}
    {%- elif c | lower == 'last_run_id' -%}
      {%- do out.append('case when ' ~ hit ~ ' then ' ~ assay.string_literal(invocation_id) ~ ' else r.last_run_id end as last_run_id') -%}
    {%- else -%}
      {%- do out.append('r.' ~ adapter.quote(c)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set fresh = make_intermediate_relation(stored, suffix='__assay_new') -%}
  {{ assay._drop_if_exists(fresh) }}
  {%- set resolved -%}
select {{ out | join(', ') }}
from {{ stored }} as r
left join ({{ assay._resolving_rejects(resolving) }}) as s
  on r.resolved_at is null and s._source_row_id = r._source_row_id and s.source_relation = r.source_relation and s.mapping = r.mapping
  {%- endset -%}
  {% call statement('assay_resolve_rejects_beside') -%}
    {{ get_create_table_as_sql(False, fresh, resolved) }}
  {%- endcall %}
  {%- do assay._swap_in(stored, fresh, stored) -%}
{% endmacro %}
