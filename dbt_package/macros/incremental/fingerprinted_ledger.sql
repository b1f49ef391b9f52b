{#
  The relation of the root project's ledger model `name` when it is built and carries the
  delivery fingerprints (`_bronze_fp`), else none: outside execution, before the first build, or
  for a ledger an earlier assay wrote. Found in the graph, not by `ref`, so that a node the
  ledger depends on (the loads model, decision 0411) or guards (the ingestion-metadata test,
  decision 0408) can read it without waiting for it.
#}
{% macro fingerprinted_ledger(name) -%}
  {%- if not execute or graph is not defined -%}{{ return(none) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name and node.name == name -%}
      {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
      {%- if relation is none -%}{{ return(none) }}{%- endif -%}
      {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
      {{ return(relation if '_bronze_fp' in have else none) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{%- endmacro %}
