{#
  dbt's is_incremental() for a keyed table (assay.keyed_materialization()): true when the
  stored table exists and this is no full refresh, whichever of `incremental` and
  `assay_keyed` builds it (dbt's own macro answers false for any materialization but
  `incremental`).
#}
{% macro keyed_is_incremental() -%}
  {{ return(adapter.dispatch('keyed_is_incremental', 'assay')()) }}
{%- endmacro %}

{% macro default__keyed_is_incremental() -%}
  {%- if not execute -%}
    {{ return(false) }}
  {%- elif model.config.materialized != 'assay_keyed' -%}
    {{ return(is_incremental()) }}
  {%- else -%}
    {%- set relation = adapter.get_relation(this.database, this.schema, this.table) -%}
    {%- if relation is none -%}
      {#- A swap interrupted between its renames: the materialization restores the backup before
          this SQL runs (assay._restore_interrupted_swap), so the stored rows are read from it. -#}
      {%- set backup = make_backup_relation(this.incorporate(type='table'), 'table', suffix='__assay_backup') -%}
      {%- set relation = adapter.get_relation(backup.database, backup.schema, backup.identifier) -%}
    {%- endif -%}
    {{ return(relation is not none and relation.type == 'table' and not should_full_refresh()) }}
  {%- endif -%}
{%- endmacro %}
