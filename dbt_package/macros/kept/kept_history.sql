{#- The post-hook of a type-2 history whose entity a keep check can mark (decision 1127). Keep
    publishes the whole entity: `<entity>__current` is published and marked by its build, and when
    this history runs in the same invocation `__current` does not fail (assay_entity,
    `assay_history`), so that dbt does not skip the history. Here, after the history has versioned
    the published rows, the versions are committed and the node fails with TABLE_KEPT, so that
    dbt skips every reader of the entity in this run, as it would have after `__current` failed.
    A mark set by an earlier run is not this node's to report (its readers' gates refuse them).
    Emits no SQL. -#}
{% macro kept_history(table, current, meta_schema) %}
  {%- if not execute or not meta_schema -%}{{ return('') }}{%- endif -%}
  {%- set mark = assay._kept_mark(current.database, meta_schema, table) -%}
  {%- if mark is not none and mark['run_id'] == invocation_id -%}
    {%- do run_query('select 1') -%}
    {{ adapter.commit() }}
    {{ exceptions.raise_compiler_error('TABLE_KEPT: ' ~ current ~ ' and its history ' ~ this ~ ' were published and kept by run '
        ~ invocation_id ~ ': check ' ~ mark['check'] ~ ' failed. Every assay model that reads it is refused until its checks pass; see `assay table get '
        ~ table ~ '`.') }}
  {%- endif -%}
  {{ return('') }}
{% endmacro %}
