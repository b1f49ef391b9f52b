{#- The mart rows of a run dbt skipped gold.mart_data_quality in (decision 0942). The mart reads every
    entity's staged model, so a test that stops one entity (a `fail` rule on its staged model, the
    ingestion-metadata test) or a skipped staged model (a referential parent set back) makes dbt
    skip it, and the run's history was lost for every entity. Called by the on-run-end hook with the
    mart's node (`mart`), this invocation's model results by name (`models`) and the entities their
    own stopping tests stopped (`stopped`, each with `records`: whether every stop of it still
    records the run): for each entity the mart's meta `assay_mart` names whose staged node
    succeeded in this invocation and that no non-recording stop stopped, it appends the rows the mart
    would have (the project's generated macro `assay_mart_rows(entity, staged)`, the mart query of
    that entity alone), under this invocation's id and start, as the mart model does; it creates
    the mart first when it does not exist yet. An entity stopped by a test whose stop records nothing
    (the ingestion metadata; a `fail` rule's stop records, decision 1162), or whose staged
    model was not built, records nothing for the run, as decision 0413 says; nor does an entity whose
    publishing model the invocation did not select (decision 0987). -#}
{% macro _record_skipped_mart(mart, models, stopped) %}
  {%- set spec = mart.config.meta['assay_mart'] -%}
  {%- set rows_of = context.get(spec['macro']) -%}
  {%- if rows_of is none -%}{{ return(none) }}{%- endif -%}
  {%- set judged = [] -%}
  {%- for e in spec['entities'] -%}
    {%- set r = models.get(e['node']) -%}
    {#- and only when the invocation selected the model that publishes it (decision 0987; absent from
        the meta of a project generated before: then as before) -#}
    {%- set published_by = models.get(e['audited']) if e.get('audited') else r -%}
    {%- if r is not none and r.status == 'success' and published_by is not none
          and (stopped.get(e['entity']) or {}).get('records', true) -%}
      {%- do judged.append({'entity': e['entity'], 'node': r.node}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not judged -%}{{ return(none) }}{%- endif -%}
  {%- set target = api.Relation.create(database=mart.database, schema=mart.schema, identifier=mart.alias, type='table') -%}
  {%- set state = {'exists': adapter.get_relation(database=mart.database, schema=mart.schema, identifier=mart.alias) is not none} -%}
  {%- for j in judged -%}
    {%- set staged = api.Relation.create(database=j['node'].database, schema=j['node'].schema, identifier=j['node'].alias) -%}
    {%- set sql = 'select * from (' ~ rows_of(j['entity'], staged) ~ ') as assay_mart_rows' -%}
    {%- if state['exists'] -%}
      {% call statement('assay_mart_append') -%}
        insert into {{ target }} {{ sql }}
      {%- endcall %}
    {%- else -%}
      {%- do adapter.create_schema(target) -%}
      {% call statement('assay_mart_create') -%}
        {{ get_create_table_as_sql(False, target, sql) }}
      {%- endcall %}
      {%- do state.update({'exists': true}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do adapter.commit() -%}
{% endmacro %}
