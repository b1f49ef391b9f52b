{#- The source rows a published build resolves (the latest delivery, kept or deduped), one row
    per (_source_row_id, source_relation), with the resolution: the rows
    default__reject_resolution_sql's UPDATE ... FROM joins, for engines that rebuild or MERGE. -#}
{% macro _resolving_rejects(staged, mappings) %}
select _source_row_id, source_relation, resolution from (
  select s._source_row_id,
         case s._mapping {% for m in mappings %}when '{{ m[0] }}' then '{{ m[1] }}' {% endfor %}end as source_relation,
         case when s._route = 'deduped' then 'deduped' else 'admitted' end as resolution,
         row_number() over (partition by s._source_row_id, s._mapping order by s._route) as _n
  from {{ staged }} as s
  where s._delivery_rank = 1 and s._route in ('kept', 'deduped')
) as t
where _n = 1
{% endmacro %}
