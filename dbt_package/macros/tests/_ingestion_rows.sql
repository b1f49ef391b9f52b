{#- The CTEs (ending in `assay_ingestion_rows`) of the generated macro `rows` over the built ledger
    model `ledger` of this project, or none: outside execution, when the ledger is not built yet, or
    when it has no fingerprints (an earlier assay built it). The ledger is found in the graph, not
    by `ref`, which would make the test wait for the model it guards. -#}
{% macro _ingestion_rows(rows, ledger) %}
  {%- if not (execute and rows and ledger) or graph is not defined -%}{{ return(none) }}{%- endif -%}
  {%- set make = context.get(rows) -%}
  {%- if make is none -%}{{ return(none) }}{%- endif -%}
  {%- set relation = assay.fingerprinted_ledger(ledger) -%}
  {{ return(none if relation is none else make(relation)) }}
{% endmacro %}
