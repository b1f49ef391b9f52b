{#- The package's on-run-end hook (dbt_project.yml; decision 0935). A blocking test that runs
    before an entity is written (a `fail` rule's `assay_fail_rule` on `<entity>__staged`, the
    ingestion-metadata test on its bronze relation) stops the entity: dbt skips it, so its
    materialization, which records every other set-back, never runs, and only dbt's log told.
    This records such a stop as SQLMesh does (decision 0932): for each entity whose published
    node this invocation skipped, one CHECK_FAILED per failed or errored stopping test (the
    check the generator named in the test's meta `assay_stops`: the rule, or INGESTION_METADATA),
    then one TABLE_BUILD_FAILED `not_written` naming the first, so that `assay table get` derives
    set back, or not published on a first build (runtime/table_states.py).

    The run id is `invocation_id`, as every node of the build records it. Events carry names
    and counts only: an errored test's message is not copied (an engine's error can quote a
    value). With no failed stopping test the hook reads the results once and runs no SQL.
    `results` is dbt's, given to on-run-end hooks only; a test run alone (`dbt test`), which
    skips no entity, records nothing. -#}
{% macro record_stopped_builds(results) %}
  {{ return(adapter.dispatch('record_stopped_builds', 'assay')(results)) }}
{% endmacro %}

{% macro default__record_stopped_builds(results) %}
  {%- if not execute or results is not defined or not results -%}{{ return('') }}{%- endif -%}
  {%- set stops = [] -%}
  {%- for r in results -%}
    {%- if r.node is defined and r.node.resource_type == 'test' and r.status in ('fail', 'error') -%}
      {%- set meta = r.node.config.meta or {} -%}
      {%- for s in meta.get('assay_stops') or [] -%}
        {%- do stops.append({'stop': s, 'result': r, 'meta_schema': meta.get('assay_meta_schema')}) -%}
      {%- endfor -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not stops -%}{{ return('') }}{%- endif -%}
  {#- The entities dbt did not write: their published node was skipped in this invocation. -#}
  {%- set skipped = {} -%}
  {%- for r in results -%}
    {%- if r.node is defined and r.node.resource_type == 'model' and r.status == 'skipped'
          and r.node.package_name == project_name -%}
      {%- do skipped.update({r.node.name: r.node}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set by_table = {} -%}
  {%- for x in stops | sort(attribute='stop.check') | sort(attribute='stop.order') -%}
    {%- set s = x['stop'] -%}
    {%- if s['node'] in skipped and x['meta_schema'] -%}
      {%- do by_table.setdefault(s['table'], {'node': skipped[s['node']], 'meta_schema': x['meta_schema'], 'events': []}) -%}
      {%- set r = x['result'] -%}
      {%- set n = r.failures if r.status == 'fail' and r.failures is not none else none -%}
      {%- if n is none -%}
        {%- set why = 'the test errored (its message is in the dbt log)' -%}
      {%- elif r.node.test_metadata is not none and r.node.test_metadata.name == 'assay_fail_rule' -%}
        {%- set why = n ~ (' row' if n == 1 else ' rows') ~ ' failed rule ' ~ s['check'] ~ ' (on_fail: fail)' -%}
      {%- else -%}
        {%- set why = n ~ (' violating row' if n == 1 else ' violating rows') -%}
      {%- endif -%}
      {%- set events = by_table[s['table']]['events'] -%}
      {%- if s['check'] not in events | map(attribute='check') | list -%}
        {%- do events.append({'type': 'CHECK_FAILED', 'table': s['table'], 'check': s['check'], 'why': why, 'rows': n}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for table, t in by_table.items() | sort -%}
    {%- set events = t['events'] -%}
    {%- do events.append({'type': 'TABLE_BUILD_FAILED', 'table': table, 'check': events[0]['check'], 'why': 'not_written'}) -%}
    {%- do assay._record_events(t['node'].database, t['meta_schema'], events) -%}
    {%- do adapter.commit() -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}
