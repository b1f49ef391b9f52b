{#-
  Publish `fresh` as `target` by renames: target -> <target>__assay_backup, fresh -> target,
  drop the backup. Two renames are not atomic; a process that dies between them leaves no
  target, the backup holding the previous state and `fresh` the new one, and
  assay._restore_interrupted_swap puts the backup back at the start of the next run (which
  then computes the new state again).
-#}
{% macro _swap_in(existing, fresh, target) %}
  {%- set backup = make_backup_relation(target, 'table', suffix='__assay_backup') -%}
  {{ assay._drop_if_exists(backup) }}
  {%- if existing is not none -%}
    {%- do adapter.rename_relation(existing, backup) -%}
  {%- endif -%}
  {%- do adapter.rename_relation(fresh, target) -%}
  {{ assay._drop_if_exists(backup) }}
{% endmacro %}
