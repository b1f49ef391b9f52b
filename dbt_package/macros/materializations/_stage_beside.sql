{#
  The rows a build-beside-and-swap materialization applies (assay_keyed, assay_history), written
  once as a table beside the target, and dropped by the caller once the swap is done
  (`adapter.drop_relation`: dbt's relation cache does not know a table a statement created).

  A temporary relation is a view on Spark (dbt-spark's `create temporary view`), and the next
  state reads the staged rows twice (the stored rows they replace or close, then the rows
  themselves), so a view made Spark plan and run the model's whole query twice: an incremental
  ledger's build on the tests' few rows spent 23.5 s in that one statement, of which each
  evaluation of the view was about 11 s (docs/decisions/0810). A leftover from a build that
  stopped between the two is dropped first.
#}
{% macro _stage_beside(target, sql) %}
  {%- set stage = make_intermediate_relation(target, suffix='__assay_stage') -%}
  {{ assay._drop_if_exists(stage) }}
  {% call statement('assay_stage') -%}
    {{ get_create_table_as_sql(False, stage, sql) }}
  {%- endcall %}
  {{ return(stage) }}
{% endmacro %}
