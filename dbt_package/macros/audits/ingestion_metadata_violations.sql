{#- The ingestion-metadata test's query over all of `relation` (a bronze relation), as an audit of the
    `assay_entity` materialization: one row per violation. Generated entities run it before they
    publish when the invocation did not select the relation's test (`dbt run`), so that no
    selection publishes an entity whose bronze fails it (decision 0987). -#}
{% macro ingestion_metadata_violations(relation) -%}
  {{- return(adapter.dispatch('ingestion_metadata_violations', 'assay')(relation)) -}}
{%- endmacro %}

{% macro default__ingestion_metadata_violations(relation) -%}
  {{- return(adapter.dispatch('test_assay_ingestion_metadata', 'assay')(relation)) -}}
{%- endmacro %}
