{#- Where an entity's change limits read its earlier runs (decision 0981): the project's
    gold.mart_data_quality, <meta>.assay_check_results and <meta>.assay_events, each as the
    relation the adapter finds, or none when it does not exist yet (the mart before the first
    build). Looked up at run time and without a ref: the mart depends on the entity, so a ref
    would close a cycle, and the mart is built after the entity, so it holds earlier runs only. -#}
{% macro history_relations(meta_schema) %}
  {{ return(adapter.dispatch('history_relations', 'assay')(meta_schema)) }}
{% endmacro %}

{% macro default__history_relations(meta_schema) %}
  {%- set out = {'mart': none, 'results': none, 'events': none} -%}
  {%- if not execute or graph is not defined -%}{{ return(out) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name and node.name == 'mart_data_quality' -%}
      {%- do out.update({'mart': adapter.get_relation(database=node.database, schema=node.schema,
                                                     identifier=node.alias or node.name)}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set meta = assay._built_meta_schema(meta_schema) -%}
  {%- for key, identifier in [('results', 'assay_check_results'), ('events', 'assay_events')] -%}
    {%- do out.update({key: adapter.get_relation(database=target.database, schema=meta, identifier=identifier)}) -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}
