{#
  Marks the open reject rows that a published build admitted (now kept) or
  deduped (a newer delivery won) as resolved. Run by the entity's
  materialization after the candidate is published, so a build refused by its
  audits never claims to have admitted anything. Resolved rows stay as audit
  history; nothing is deleted.
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
  and s._route in ('kept', 'deduped')
  and s._source_row_id = {{ reject }}._source_row_id
  and {{ reject }}.source_relation = case s._mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end
{% endmacro %}
