{#
  The conservation law from recorded counts, for the write-audit-publish step.

  The staged relation holds exactly one row per bronze row (checked here by
  count; one delivery per `_source_row_id` and `_load_id` is the ingestion
  audit's job) and gives each one route. A source row delivered several times
  has one latest delivery; the earlier ones are superseded and routed `deduped`
  (decision 0014), so only latest deliveries are ever diverted, and the reject
  row of a diverted source row describes exactly that delivery (`_load_id`).
  So the law holds when the candidate holds the kept rows, the unresolved
  reject rows of current bronze are the diverted deliveries, and
  bronze = entity + unresolved reject + deduped (key losers and superseded
  deliveries). Counting is one cheap pass; the row-by-row version is
  `conservation_violations` (the generic test `assay_conservation`), for when a
  count could hide two compensating errors.

  Returns one row when the law is broken, none when it holds.
#}
{% macro conservation_count_violations(entity, staged, reject, mappings) %}
  {{ return(adapter.dispatch('conservation_count_violations', 'assay')(entity, staged, reject, mappings)) }}
{% endmacro %}

{% macro default__conservation_count_violations(entity, staged, reject, mappings) %}
with assay_counts as (
  select
    {#- a bronze row once per mapping that reads its relation: each stages it (decision 0947) #}
    ({% for m in mappings %}(select count(*) from {{ m[2] }}){% if not loop.last %} + {% endif %}{% endfor %}) as bronze_rows,
    (select count(*) from {{ staged }}) as staged_rows,
    (select count(*) from {{ staged }} where _route = 'kept') as kept_rows,
    (select count(*) from {{ staged }} where _route = 'deduped') as deduped_rows,
    (select count(*) from {{ staged }} where _route in ('quarantined', 'failed')) as diverted_rows,
    (select count(*) from {{ entity }}) as entity_rows,
    {%- if reject is not none %}
    (select count(*) from {{ reject }} as r
      where r.resolved_at is null
        and exists (
          select 1 from {{ staged }} as s
          where s._route in ('quarantined', 'failed')
            and s._source_row_id = r._source_row_id
            and s._load_id = r._load_id
            and s._mapping = r.mapping
            and r.source_relation = case s._mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end
        )) as open_rejects
    {%- else %}
    0 as open_rejects
    {%- endif %}
)
select *
from assay_counts
where bronze_rows <> entity_rows + open_rejects + deduped_rows
   or staged_rows <> bronze_rows
   or entity_rows <> kept_rows
   or open_rejects <> diverted_rows
{% endmacro %}
