{#- The CTEs (ending in `assay_ingestion_rows`) of the generated macro `rows` over the built ledger
    model `ledger` of this project, or none: outside execution, when the ledger is not built yet, or
    when it has no fingerprints (an earlier assay built it). The ledger is found in the graph, not
    by `ref`, which would make the test wait for the model it guards. -#}
{% macro _ingestion_rows(rows, ledger) %}
  {%- if not (execute and rows and ledger) or graph is not defined -%}{{ return(none) }}{%- endif -%}
  {%- set make = context.get(rows) -%}
  {%- if make is none -%}{{ return(none) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name and node.name == ledger -%}
      {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias) -%}
      {%- if relation is none -%}{{ return(none) }}{%- endif -%}
      {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
      {%- if '_bronze_fp' not in have -%}{{ return(none) }}{%- endif -%}
      {{ return(make(relation)) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}
