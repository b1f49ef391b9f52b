{#
  Write-audit-publish for an entity table.

  The model's rows are written to a candidate relation, every blocking audit
  of the entity runs on that candidate, and only when all of them hold is the
  candidate swapped in for the published table. When one fails the published
  table is left as it was (a first build stays unpublished), the candidate is
  kept for inspection, and the model fails with CHECK_FAILED, so dbt skips
  everything downstream.

  Declared table checks (document 000) run on the same candidate in one query
  (assay._run_declared_checks); a failed `required` one blocks like an audit,
  an `advisory` one is only recorded. Every result goes to
  <meta>.assay_check_results before the publish decision.

  The audits come from a macro the generator writes into the project,
  `default__<config assay_audits>(candidate)`, returning a list of
  {'name': ..., 'sql': <query returning the violating rows>}.
#}
{% materialization assay_entity, default %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_cached_relation(this) -%}
  {%- set candidate = make_intermediate_relation(target_relation, suffix='__assay_candidate') -%}
  {%- set backup = make_backup_relation(target_relation, 'table', suffix='__assay_backup') -%}
  {%- set grant_config = config.get('grants') -%}

  {{ assay._drop_if_exists(candidate) }}
  {{ assay._drop_if_exists(backup) }}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% call statement('main') -%}
    {{ get_create_table_as_sql(False, candidate, sql) }}
  {%- endcall %}

  {%- set failures = assay._run_entity_audits(candidate, config.get('assay_audits')) -%}
  {#- Declared checks (000) measure the same candidate and are recorded whether or not they
      pass; the commit below keeps their results even when the node then fails. -#}
  {%- do failures.extend(assay._run_declared_checks(candidate, config.get('assay_audits'))) -%}
  {#- SQL check files (002): block sets back, warn and keep publish; all recorded. -#}
  {%- do failures.extend(assay._run_sql_checks(candidate, config.get('assay_audits'), config.get('assay_meta_schema'))) -%}
  {% if failures | length > 0 %}
    {# Keep the candidate: its rows are the evidence of what failed. #}
    {{ adapter.commit() }}
    {{ exceptions.raise_compiler_error('CHECK_FAILED: ' ~ (failures | join('; ')) ~ '. ' ~ target_relation ~ ' was not published; the failing candidate is ' ~ candidate ~ '.') }}
  {% endif %}

  {% if existing_relation is not none %}
    {{ adapter.rename_relation(existing_relation, backup) }}
  {% endif %}
  {{ adapter.rename_relation(candidate, target_relation) }}
  {% do create_indexes(target_relation) %}

  {#- Only now that the candidate is published may open rejects be marked admitted or deduped. -#}
  {%- set resolution = assay._entity_resolution_sql(config.get('assay_audits')) -%}
  {% if resolution %}
    {% call statement('assay_resolve_rejects') -%}
      {{ resolution }}
    {%- endcall %}
  {% endif %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {% do persist_docs(target_relation, model) %}
  {{ adapter.commit() }}
  {{ assay._drop_if_exists(backup) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
