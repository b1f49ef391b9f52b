{#-
  Repairs a swap (assay._swap_in) that died between its two renames: when `target` is missing
  and its backup exists, the backup (the state before the interrupted run) becomes `target`
  again and the half-published new state is dropped. Anything else is left alone.
-#}
{% macro _restore_interrupted_swap(target) %}
  {%- set found = adapter.get_relation(database=target.database, schema=target.schema, identifier=target.identifier) -%}
  {%- set backup = make_backup_relation(target, 'table', suffix='__assay_backup') -%}
  {%- set stored = adapter.get_relation(database=backup.database, schema=backup.schema, identifier=backup.identifier) -%}
  {%- if found is none and stored is not none -%}
    {{ log('assay: ' ~ target ~ ' was missing after an interrupted swap; restoring it from ' ~ stored, info=True) }}
    {%- do adapter.rename_relation(stored, target) -%}
    {{ assay._drop_if_exists(make_intermediate_relation(target, suffix='__assay_new')) }}
  {%- endif -%}
{% endmacro %}
