{#- The package's on-run-end hook (dbt_project.yml; decision 0935). A blocking test that runs
    before an entity is written (a `fail` rule's `assay_fail_rule` on `<entity>__staged`, the
    ingestion-metadata test on its bronze relation) stops the entity: dbt skips it, so its
    materialization, which records every other set-back, never runs, and only dbt's log told.
    This records such a stop as SQLMesh does (decision 0932): for each entity whose published
    node this invocation skipped, one CHECK_FAILED per failed or errored stopping test (the
    check the generator named in the test's meta `assay_stops`: the rule, or INGESTION_METADATA),
    then one TABLE_BUILD_FAILED `not_written` naming the first, so that `assay table get` derives
    set back, or not published on a first build (runtime/table_states.py). An entity dbt skipped
    because an entity it reads (a referential parent) was not written in this invocation (set
    back, kept, stopped, errored or itself skipped), or because the check task of a bronze
    relation it extracts from failed (decision 1159), gets one TABLE_BUILD_FAILED
    `upstream_failed: <entity>` (`upstream_failed: bronze.<table>`; decision 0940): dbt skips it for its parent, so it is not
    written either, and `table get` says so, naming the parent and its check. One whose own
    staged, reject or current model errored (a database error, not a check) gets one
    TABLE_BUILD_FAILED `node_errored: <model>`: without it `table get` told the previous build's
    state as the latest (an outside tester, session 37). When dbt skipped
    gold.mart_data_quality (it reads every staged model, so one entity's stop skips it), the rows
    of every entity whose staged model this invocation built are appended to it here (decision
    0942), also of one its own `fail` rule stopped (its rows were judged; decision 1162), not of
    one the ingestion-metadata test stopped (the meta's `records`).

    The run id is `invocation_id`, as every node of the build records it. Events carry names
    and counts only: an errored test's message is not copied (an engine's error can quote a
    value). With no node skipped the hook reads the results once and runs no SQL.
    `results` is dbt's, given to on-run-end hooks only; a test run alone (`dbt test`), which
    skips no entity, records nothing. -#}
{% macro record_stopped_builds(results) %}
  {{ return(adapter.dispatch('record_stopped_builds', 'assay')(results)) }}
{% endmacro %}

{% macro default__record_stopped_builds(results) %}
  {%- if not execute or results is not defined or not results -%}{{ return('') }}{%- endif -%}
  {#- One pass over the results: the failed stopping tests, the entities' skipped nodes, and the
      nodes this invocation did not write (an error, or skipped: what makes dbt skip a reader). -#}
  {%- set stops = [] -%}
  {%- set skipped = {} -%}
  {%- set unwritten = {} -%}
  {%- set models = {} -%}
  {%- for r in results -%}
    {%- if r.node is defined and r.node.resource_type == 'model' and r.node.package_name == project_name -%}
      {%- do models.update({r.node.name: r}) -%}
    {%- endif -%}
    {%- if r.node is defined and r.node.resource_type == 'test' and r.status in ('fail', 'error') -%}
      {%- set meta = r.node.config.meta or {} -%}
      {%- for s in meta.get('assay_stops') or [] -%}
        {%- do stops.append({'stop': s, 'result': r, 'meta_schema': meta.get('assay_meta_schema')}) -%}
      {%- endfor -%}
    {%- elif r.node is defined and r.node.resource_type in ('model', 'snapshot') and r.status in ('error', 'skipped')
          and r.node.package_name == project_name -%}
      {#- a model that refused to read a kept table (KEPT_TABLE_REFUSED) did not error of its own:
          the kept table's events say why -#}
      {%- set refused = r.status == 'error' and 'KEPT_TABLE_REFUSED' in (r.message or '') -%}
      {%- do unwritten.update({r.node.name: 'refused' if refused else r.status}) -%}
      {%- if r.status == 'skipped' -%}{%- do skipped.update({r.node.name: r.node}) -%}{%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if not skipped -%}{{ return('') }}{%- endif -%}
  {#- The entities a stopping test stopped (decision 0935): their published node was skipped. -#}
  {%- set by_table = {} -%}
  {%- for x in stops | sort(attribute='stop.check') | sort(attribute='stop.order') -%}
    {%- set s = x['stop'] -%}
    {%- if s['node'] in skipped and x['meta_schema'] -%}
      {%- do by_table.setdefault(s['table'], {'node': skipped[s['node']], 'meta_schema': x['meta_schema'], 'events': [], 'records': true}) -%}
      {#- a stop before the rows were judged (the ingestion metadata) leaves the run out of the
          entity's quality history; a `fail` rule's does not (decision 1162). A project generated
          before the meta said so: no stop records, as then. -#}
      {%- if not s.get('records', false) -%}{%- do by_table[s['table']].update({'records': false}) -%}{%- endif -%}
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
  {#- The entities skipped because an entity they read was not written in this invocation (decision
      0940): the generator names, in the published node's meta `assay_upstream`, the entities it
      reads and the node it reads each through. One TABLE_BUILD_FAILED `upstream_failed: <entity>`
      (the first by name, `and N more`), no check: the upstream's own events name what failed. An
      entity its own stopping test stopped is recorded above, once. -#}
  {%- set upstream = {} -%}
  {%- for name, node in skipped.items() | sort -%}
    {%- set meta = node.config.meta or {} -%}
    {%- set table = meta.get('assay_entity') -%}
    {%- if table and meta.get('assay_meta_schema') and table not in by_table -%}
      {%- set causes = [] -%}
      {%- for u in meta.get('assay_upstream') or [] -%}
        {%- if u['node'] in unwritten and u['table'] not in causes -%}{%- do causes.append(u['table']) -%}{%- endif -%}
      {%- endfor -%}
      {#- or one of its own models errored (a database error, not a check): its staged or reject model -#}
      {%- set own = [] -%}
      {%- for suffix in ['__staged', '__reject', '__current'] -%}
        {%- if unwritten.get(table ~ suffix) == 'error' -%}{%- do own.append(table ~ suffix) -%}{%- endif -%}
      {%- endfor -%}
      {%- if own -%}
        {%- do upstream.setdefault((node.database, meta['assay_meta_schema']), []).append(
              {'type': 'TABLE_BUILD_FAILED', 'table': table, 'check': none, 'why': 'node_errored: ' ~ own[0]}) -%}
      {%- elif causes -%}
        {%- set causes = causes | sort -%}
        {%- set more = ' and ' ~ ((causes | length) - 1) ~ ' more' if causes | length > 1 else '' -%}
        {%- do upstream.setdefault((node.database, meta['assay_meta_schema']), []).append(
              {'type': 'TABLE_BUILD_FAILED', 'table': table, 'check': none, 'why': 'upstream_failed: ' ~ causes[0] ~ more}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- for where, events in upstream.items() | sort -%}
    {%- do assay._record_events(where[0], where[1], events) -%}
    {%- do adapter.commit() -%}
  {%- endfor -%}
  {#- The quality history of the entities this invocation judged, when dbt skipped the mart for
      another entity's stop or set-back (decision 0942). -#}
  {%- for name, node in skipped.items() | sort -%}
    {%- if (node.config.meta or {}).get('assay_mart') -%}
      {%- do assay._record_skipped_mart(node, models, by_table) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}
