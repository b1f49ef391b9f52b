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

  A failing `keep` SQL check publishes the data, records TABLE_KEPT in <meta>.assay_events and
  then fails the node, so dbt skips its readers in this run; later readers are refused by
  assay.kept_gate until the table's checks pass (decisions 0510-0512). A published build of a
  kept table clears the mark: its checks passed, or it has none any more. A set-back leaves an
  existing mark as it is. Every state change is one event (CHECK_FAILED, TABLE_ROLLED_BACK,
  TABLE_KEPT, TABLE_KEPT_CLEARED).

  An incremental entity on an engine with transactions (DuckDB, PostgreSQL) does not copy the
  whole entity: its candidate is a view of the published rows with the ledger's changes since the
  last publish applied, audited and checked as above; publishing deletes and inserts those changes
  in one transaction; a failing candidate is written down as a table for inspection
  (assay._entity_changes, decision 1090).

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

  {#- An incremental entity on DuckDB or PostgreSQL: the candidate is a view of the published rows
      with this build's changes applied, and publishing applies them in one transaction (decision 1090). -#}
  {%- set changes = assay._entity_changes(target_relation, existing_relation, candidate, sql) -%}
  {% call statement('main') -%}
    {% if changes is none %}{{ get_create_table_as_sql(False, candidate, sql) }}{% else %}{{ changes['candidate'] }}{% endif %}
  {%- endcall %}

  {%- set failures = assay._run_entity_audits(candidate, config.get('assay_audits')) -%}
  {#- Declared checks (000) measure the same candidate and are recorded whether or not they
      pass; the commit below keeps their results even when the node then fails. -#}
  {#- Engines that stop or catch a query only from Python measure the declared checks there first
      (decision 0533); the statement must be submitted here. -#}
  {#- A declared key_uniqueness check over the entity key is not counted again once the key audit
      above has passed on this candidate (decision 1010). -#}
  {%- set key_proven = assay._key_audit_held(candidate, config.get('assay_audits'), failures) -%}
  {%- set declared_probe = assay._declared_check_probe(candidate, config.get('assay_audits'), key_proven) -%}
  {% if declared_probe is not none %}
    {{ adapter.commit() }}
    {% call statement('assay_declared_check_probe', language='python') -%}{{ declared_probe['code'] }}{%- endcall %}
  {% endif %}
  {%- do failures.extend(assay._run_declared_checks(candidate, config.get('assay_audits'), key_proven)) -%}
  {#- SQL check files (002): block sets back, warn and keep publish; all recorded. -#}
  {%- set meta_schema = config.get('assay_meta_schema') -%}
  {#- The name results and events are recorded under: the entity, or for a model of the user's own
      built here (decision 0524) its `<schema>.<table>` as the tables document names it, which
      `assay table get` and `assay checks` read (it was recorded as `<schema>__<table>`). -#}
  {%- set named_as = config.get('assay_audits', '') | replace('assay_audits__', 'assay_table_name__') -%}
  {%- set name_of = context.get(named_as) or context.get('default__' ~ named_as) -%}
  {%- set entity = name_of() if name_of is not none else config.get('assay_audits', '') | replace('assay_audits__', '') -%}
  {%- set report = {'kept': [], 'failed': [], 'outcomes': {}} -%}
  {#- Engines that catch an error only in Python count the SQL checks first (decision 0511); dbt lets
      only a materialization submit Python, so the statement is here. -#}
  {%- set probe = assay._sql_check_probe(candidate, config.get('assay_audits')) -%}
  {% if probe is not none %}
    {{ adapter.commit() }}
    {% call statement('assay_sql_check_probe', language='python') -%}{{ probe['code'] }}{%- endcall %}
    {%- do report.update({'outcomes': assay._sql_check_outcomes()}) -%}
  {% endif %}
  {%- do failures.extend(assay._run_sql_checks(candidate, config.get('assay_audits'), meta_schema, entity, report)) -%}
  {%- set events = assay._check_failed_events(entity, failures, report) -%}
  {% if failures | length > 0 %}
    {# Keep the candidate: its rows are the evidence of what failed. A mark stays as it is (decision 0513). #}
    {%- if changes is not none -%}{%- do assay._keep_candidate_rows(candidate) -%}{%- endif -%}
    {%- do events.append({'type': 'TABLE_ROLLED_BACK', 'table': entity, 'check': failures[0].split(': ', 1)[0],
                          'why': 'previous_version_kept' if existing_relation is not none else 'not_published'}) -%}
    {%- if meta_schema -%}{%- do assay._record_events(candidate.database, meta_schema, events) -%}{%- endif -%}
    {{ adapter.commit() }}
    {#- Say what stays published: an outside tester (session 49) read "was not published" of a
        table whose previous version stayed. -#}
    {%- set stays = '; its previous version is still published' if existing_relation is not none else '' -%}
    {{ exceptions.raise_compiler_error('CHECK_FAILED: ' ~ (failures | join('; ')) ~ '. ' ~ target_relation ~ ' was not published' ~ stays ~ '; the failing candidate is ' ~ candidate ~ '.'
                                       ~ assay._stale_staged_hint(candidate, config.get('assay_audits'), failures)) }}
  {% endif %}

  {% if changes is not none %}
    {#- One transaction: readers see the previous version until the commit below. -#}
    {% call statement('assay_publish_removed') -%}{{ changes['delete'] }}{%- endcall %}
    {% call statement('assay_publish_added') -%}{{ changes['insert'] }}{%- endcall %}
    {% do adapter.drop_relation(candidate.incorporate(type='view')) %}
  {% else %}
    {% if existing_relation is not none %}
      {{ adapter.rename_relation(existing_relation, backup) }}
    {% endif %}
    {{ adapter.rename_relation(candidate, target_relation) }}
    {% do create_indexes(target_relation) %}
  {% endif %}

  {#- Only now that the candidate is published may open rejects be marked admitted or deduped. -#}
  {%- set resolution = assay._entity_resolution_sql(config.get('assay_audits'), changes['since'] if changes is not none else none) -%}
  {% if resolution %}
    {% call statement('assay_resolve_rejects') -%}
      {{ resolution }}
    {%- endcall %}
  {% endif %}

  {#- The mark: set by a failing keep check, cleared by a published build (decision 0512). -#}
  {%- set kept = assay._kept_after_publish(target_relation, entity, meta_schema, report['kept'], events, config.get('assay_checked', false)) -%}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {% do persist_docs(target_relation, model) %}
  {{ adapter.commit() }}
  {{ assay._drop_if_exists(backup) }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}

  {#- Published, but kept: the node fails so that dbt builds nothing that reads it in this run. A
      type-2 entity's `__current` leaves that to its history when the history runs in this
      invocation: the history versions the kept rows, then fails with TABLE_KEPT (decision 1127). -#}
  {% if kept and assay._history_runs(config.get('assay_history')) %}
    {%- do log('assay: ' ~ kept ~ ' Its history ' ~ config.get('assay_history') ~ ' versions the published rows and then fails the run.', info=true) -%}
  {% elif kept %}
    {{ exceptions.raise_compiler_error(kept) }}
  {% endif %}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
