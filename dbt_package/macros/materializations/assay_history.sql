{#
  Materialization assay_history: a type-2 history with the semantics and the table of dbt's
  `check` snapshot, for engines whose tables dbt's snapshot cannot change (Spark parquet).
  Chosen by assay.type2_is_snapshot() at parse time (the generator writes the snapshot and
  this model, and exactly one of them is enabled; decision 0807).

  What dbt decides stays dbt's: the check strategy (snapshot_check_strategy: which rows changed,
  a null-safe comparison of check_cols, every row when a check column is new), the first table
  (build_snapshot_table) and the staging rows (snapshot_staging_table: 'insert' for a new or
  changed key, 'update' closing the current version, hard_deletes as configured) with their
  dbt_scd_id, dbt_updated_at, dbt_valid_from and dbt_valid_to. Only applying the staging rows
  is assay's: the next history (stored rows, the current versions of changed keys closed, then
  the new versions) is built beside the stored one and swapped in (assay._swap_in; a crash
  between the two renames is repaired at the start of the next run). On Delta, Iceberg and Hudi
  the staging rows are merged in place by dbt's snapshot_merge_sql, as dbt's snapshot does.

  Like a snapshot, the history is never rebuilt: --full-refresh does not apply to it.
  Config: unique_key (a column or a list), check_cols, grants, hard_deletes, dbt_valid_to_current,
  snapshot_meta_column_names.
#}
{% materialization assay_history, default %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- do assay._restore_interrupted_swap(target_relation) -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set target_exists = existing_relation is not none -%}

  {{ run_hooks(pre_hooks) }}

  {%- set strategy = snapshot_check_strategy(model, "snapshotted_data", "source_data", model['config'], target_exists) -%}
  {%- if not target_exists -%}
    {%- set fresh = make_intermediate_relation(target_relation, suffix='__assay_new') -%}
    {{ assay._drop_if_exists(fresh) }}
    {% call statement('main') -%}
      {{ create_table_as(False, fresh, build_snapshot_table(strategy, model['compiled_code'])) }}
    {%- endcall %}
    {%- do assay._swap_in(none, fresh, target_relation) -%}
  {%- else -%}
    {%- set columns = config.get('snapshot_table_column_names') or get_snapshot_table_column_names() -%}
    {{ adapter.assert_valid_snapshot_target_given_strategy(existing_relation, columns, strategy) }}
    {%- set staging = assay._stage_beside(target_relation, snapshot_staging_table(strategy, model['compiled_code'], existing_relation)) -%}
    {%- do adapter.dispatch('assay_history', 'assay')(existing_relation, staging, target_relation, columns) -%}
    {% do adapter.drop_relation(staging) %}
  {%- endif -%}

  {#- As dbt's snapshot: grants and docs, then the post-hooks, then the commit (a kept type-2
      entity's post-hook commits and fails the node once all of it is written; decision 1127). -#}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke(existing_relation, full_refresh_mode=False)) %}
  {% do persist_docs(target_relation, model) %}
  {{ run_hooks(post_hooks) }}
  {{ adapter.commit() }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#-
  Rebuild beside and swap: the stored versions (the current version of a changed or deleted key
  closed at the staging row's valid_to, the one dbt's MERGE would set), then the new versions.
  Columns new in the model are added at the end, NULL on the stored versions, as dbt's snapshot
  adds them; columns the model dropped stay, NULL on the new versions.
-#}
{% macro default__assay_history(existing, staging, target, columns) %}
  {%- set stored_cols = adapter.get_columns_in_relation(existing) -%}
  {%- set stored_names = stored_cols | map(attribute='name') | map('lower') | list -%}
  {%- set staged_cols = assay._history_staging_columns(staging) -%}
  {%- set staged_names = staged_cols | map(attribute='name') | map('lower') | list -%}
  {%- set valid_to = columns.dbt_valid_to -%}
  {%- set scd_id = columns.dbt_scd_id -%}
  {%- set old_rows, new_rows = [], [] -%}
  {%- for c in stored_cols -%}
    {%- set q = adapter.quote(c.name) -%}
    {%- if c.name | lower == valid_to | lower -%}
      {%- do old_rows.append('case when c.assay_closes then c.assay_valid_to else h.' ~ q ~ ' end as ' ~ q) -%}
    {%- else -%}
      {%- do old_rows.append('h.' ~ q) -%}
    {%- endif -%}
    {%- if c.name | lower in staged_names -%}
      {%- do new_rows.append('s.' ~ q) -%}
    {%- else -%}
      {%- do new_rows.append('cast(null as ' ~ c.data_type ~ ') as ' ~ q) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for c in staged_cols if c.name | lower not in stored_names -%}
    {%- do old_rows.append('cast(null as ' ~ c.data_type ~ ') as ' ~ adapter.quote(c.name)) -%}
    {%- do new_rows.append('s.' ~ adapter.quote(c.name)) -%}
  {%- endfor -%}
  {%- set current_test -%}
    {%- if config.get('dbt_valid_to_current') -%}
      (h.{{ valid_to }} is null or h.{{ valid_to }} = {{ config.get('dbt_valid_to_current') }})
    {%- else -%}
      h.{{ valid_to }} is null
    {%- endif -%}
  {%- endset -%}
  {%- set next_history -%}
select {{ old_rows | join(', ') }}
from {{ existing }} as h
left join (
    select {{ scd_id }} as assay_scd_id, {{ valid_to }} as assay_valid_to, true as assay_closes
    from {{ staging }}
    where dbt_change_type in ('update', 'delete')
) as c on c.assay_scd_id = h.{{ scd_id }} and {{ current_test }}
union all
select {{ new_rows | join(', ') }}
from {{ staging }} as s
where s.dbt_change_type = 'insert'
  {%- endset -%}
  {%- set fresh = make_intermediate_relation(target, suffix='__assay_new') -%}
  {{ assay._drop_if_exists(fresh) }}
  {% call statement('main') -%}
    {{ create_table_as(False, fresh, next_history) }}
  {%- endcall %}
  {%- do assay._swap_in(existing, fresh, target) -%}
{% endmacro %}

{#- Delta, Iceberg and Hudi change a table in place: dbt's snapshot MERGE, after adding new columns. -#}
{% macro spark__assay_history(existing, staging, target, columns) %}
  {%- if config.get('file_format', 'parquet') in ['delta', 'iceberg', 'hudi'] -%}
    {%- set staged_cols = assay._history_staging_columns(staging) -%}
    {%- set stored = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
    {%- set missing = [] -%}
    {%- for c in staged_cols if c.name | lower not in stored -%}
      {%- do missing.append(c) -%}
    {%- endfor -%}
    {%- do create_columns(existing, missing) -%}
    {%- set insert_cols = [] -%}
    {%- for c in staged_cols -%}
      {%- do insert_cols.append(adapter.quote(c.name)) -%}
    {%- endfor -%}
    {% call statement('main') -%}
      {{ snapshot_merge_sql(target, staging, insert_cols) }}
    {%- endcall %}
  {%- else -%}
    {%- do assay.default__assay_history(existing, staging, target, columns) -%}
  {%- endif -%}
{% endmacro %}
