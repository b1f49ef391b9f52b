{#- Whether the engine publishes an incremental entity's changes in place: one transaction over a
    DELETE and an INSERT. Spark on parquet has neither, so it re-publishes the whole entity. -#}
{% macro _publishes_changes() %}
  {{ return(adapter.dispatch('_publishes_changes', 'assay')()) }}
{% endmacro %}

{% macro default___publishes_changes() %}{{ return(false) }}{% endmacro %}
{% macro duckdb___publishes_changes() %}{{ return(true) }}{% endmacro %}
{% macro postgres___publishes_changes() %}{{ return(true) }}{% endmacro %}
