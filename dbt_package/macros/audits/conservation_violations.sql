{#
  The conservation law as a query: every bronze row (one delivery of a source
  row) is in exactly one place, the entity, an unresolved reject, or the dedupe
  count. Returns the bronze rows placed zero or several times.

  mappings: list of [mapping name, source relation name, source relation].
  A delivery is (source relation, `_source_row_id`, `_load_id`), which the
  ingestion audit keeps unique, so it needs the ingestion metadata; it is placed
  once per mapping that reads the relation (decision 0947). A source
  row delivered several times is placed delivery by delivery (decision 0014):
  its superseded deliveries in the dedupe count, its latest one in the entity,
  the dedupe count, or the reject row, which describes that delivery.
  Reject rows whose bronze row has aged out are history, not placements, so
  only bronze rows are judged.
#}
{% macro conservation_violations(entity, staged, reject, mappings) %}
  {{ return(adapter.dispatch('conservation_violations', 'assay')(entity, staged, reject, mappings)) }}
{% endmacro %}

{% macro default__conservation_violations(entity, staged, reject, mappings) %}
{%- set string = assay.sql_type('string') -%}
with assay_bronze as (
  {#- one delivery per mapping that reads the relation: each stages every bronze row (decision 0947) #}
  {%- for m in mappings %}
  select '{{ m[1] }}' as source_relation, '{{ m[0] }}' as _mapping, cast(_source_row_id as {{ string }}) as source_row_id, cast(_load_id as {{ string }}) as load_id from {{ m[2] }}
  {%- if not loop.last %}
  union all
  {%- endif %}
  {%- endfor %}
),
assay_placed as (
  select case _mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end as source_relation, _mapping, _source_row_id as source_row_id, _load_id as load_id from {{ entity }}
  union all
  select case _mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end as source_relation, _mapping, _source_row_id as source_row_id, _load_id as load_id from {{ staged }} where _route = 'deduped'
  {%- if reject is not none %}
  union all
  {#- Open rejects this build admits or dedupes are resolved right after it publishes, so they
      are judged as the state the build leaves behind: not open. Only the latest delivery of a
      source row resolves its reject row. #}
  select r.source_relation, r.mapping as _mapping, r._source_row_id as source_row_id, r._load_id as load_id from {{ reject }} as r
  where r.resolved_at is null
    and not exists (
      select 1 from {{ staged }} as s
      where s._delivery_rank = 1
        and s._route in ('kept', 'deduped')
        and s._source_row_id = r._source_row_id
        and s._mapping = r.mapping
        and r.source_relation = case s._mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end
    )
  {%- endif %}
),
assay_counts as (
  select source_relation, _mapping, source_row_id, load_id, count(*) as placements
  from assay_placed
  group by source_relation, _mapping, source_row_id, load_id
)
select b.source_relation, b.source_row_id, b.load_id, coalesce(c.placements, 0) as placements
from assay_bronze as b
left join assay_counts as c
  on c.source_relation = b.source_relation and c._mapping = b._mapping and c.source_row_id = b.source_row_id and c.load_id = b.load_id
where coalesce(c.placements, 0) <> 1
{% endmacro %}
