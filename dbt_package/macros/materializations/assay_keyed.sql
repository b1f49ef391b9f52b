{#
  Materialization assay_keyed: an incremental table keyed on `unique_key` (replace the stored
  rows whose key the new rows carry, add the rest: dbt's delete+insert) for engines whose
  tables cannot be changed in place. Chosen by assay.keyed_materialization() (Spark); the
  model's SQL reads the stored rows through assay.keyed_is_incremental(), as with dbt's
  incremental materialization.

  On Spark parquet tables there is no UPDATE, DELETE, MERGE, nor INSERT OVERWRITE of a table
  the query reads, so the new state is built beside the old one (stored rows whose key is not
  among the new rows, then the new rows) and swapped in with two renames
  (assay._swap_in; a crash between them is repaired at the start of the next run by
  assay._restore_interrupted_swap). On Delta, Iceberg and Hudi (config file_format) the table
  format's MERGE does it in place (spark__assay_keyed).

  Config: unique_key (a column or a list), full_refresh, on_schema_change (new columns are
  appended either way).
#}
{% materialization assay_keyed, default %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- do assay._restore_interrupted_swap(target_relation) -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- set grant_config = config.get('grants') -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is none or should_full_refresh() -%}
    {%- set fresh = make_intermediate_relation(target_relation, suffix='__assay_new') -%}
    {{ assay._drop_if_exists(fresh) }}
    {% call statement('main') -%}
      {{ get_create_table_as_sql(False, fresh, model['compiled_code']) }}
    {%- endcall %}
    {%- do assay._swap_in(existing_relation, fresh, target_relation) -%}
  {%- else -%}
    {%- set stage = assay._stage_beside(target_relation, model['compiled_code']) -%}
    {%- do adapter.dispatch('assay_keyed', 'assay')(existing_relation, stage, target_relation, config.get('unique_key')) -%}
    {% do adapter.drop_relation(stage) %}
  {%- endif -%}

  {{ run_hooks(post_hooks) }}
  {{ adapter.commit() }}
  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=should_full_refresh()) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#- Rebuild beside and swap: works wherever CREATE TABLE AS and a rename do. -#}
{% macro default__assay_keyed(existing, stage, target, unique_key) %}
  {%- set keys = [unique_key] if unique_key is string else unique_key -%}
  {%- set stage_cols = adapter.get_columns_in_relation(stage) -%}
  {%- set have = adapter.get_columns_in_relation(existing) | map(attribute='name') | map('lower') | list -%}
  {%- set fresh = make_intermediate_relation(target, suffix='__assay_new') -%}
  {{ assay._drop_if_exists(fresh) }}
  {%- set kept = [] -%}
  {%- for c in stage_cols -%}
    {%- if c.name | lower in have -%}
      {%- do kept.append('e.' ~ adapter.quote(c.name)) -%}
    {%- else -%}
      {%- do kept.append('cast(null as ' ~ c.data_type ~ ') as ' ~ adapter.quote(c.name)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set same = [] -%}
  {%- for k in keys -%}
    {%- do same.append('s.' ~ k ~ ' = e.' ~ k) -%}
  {%- endfor -%}
  {%- set new_state -%}
select {{ kept | join(', ') }} from {{ existing }} as e
where not exists (select 1 from {{ stage }} as s where {{ same | join(' and ') }})
union all
select {{ stage_cols | map(attribute='quoted') | join(', ') }} from {{ stage }}
  {%- endset -%}
  {% call statement('main') -%}
    {{ get_create_table_as_sql(False, fresh, new_state) }}
  {%- endcall %}
  {%- do assay._swap_in(existing, fresh, target) -%}
{% endmacro %}

{#- Delta, Iceberg and Hudi change a table in place: MERGE on the key (dbt-spark's merge). -#}
{% macro spark__assay_keyed(existing, stage, target, unique_key) %}
  {%- if config.get('file_format', 'parquet') in ['delta', 'iceberg', 'hudi'] -%}
    {%- do process_schema_changes('append_new_columns', stage, existing) -%}
    {% call statement('main') -%}
      {{ spark__get_merge_sql(target, stage, unique_key, none, none) }}
    {%- endcall %}
  {%- else -%}
    {%- do assay.default__assay_keyed(existing, stage, target, unique_key) -%}
  {%- endif -%}
{% endmacro %}
