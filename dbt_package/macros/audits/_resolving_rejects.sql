{#- The rows of `resolving` (assay.lower.rejects.resolving_query) at most once per
    (_source_row_id, source_relation, mapping): a MERGE, and the swap's left join, must meet each reject
    row at most once; on a tie `deduped` wins. -#}
{% macro _resolving_rejects(resolving) %}
select _source_row_id, source_relation, mapping, resolution from (
  select t._source_row_id, t.source_relation, t.mapping, t.resolution,
         row_number() over (partition by t._source_row_id, t.source_relation, t.mapping order by t.resolution desc) as _n
  from ({{ resolving }}) as t
) as u
where _n = 1
{% endmacro %}
