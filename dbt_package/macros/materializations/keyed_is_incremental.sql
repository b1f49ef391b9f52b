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
    {{ return(relation is not none and relation.type == 'table' and not should_full_refresh()) }}
  {%- endif -%}
{%- endmacro %}
