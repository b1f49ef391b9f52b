{#
  The refusal of a reader of a kept table (002 "Keeping a table", decisions 0510-0512), called from
  the pre-hook of every model assay generates that reads an entity table (a child's staged model
  probing its parent, a type-2 snapshot) and at the start of the coverage and reconcile tests.

  For each table it reads: when <meta>.assay_events says the table is kept, the table's check task
  runs first, in this run: its checks run on the table as published; when they all pass the mark is
  cleared (TABLE_KEPT_CLEARED, why checks_passed) and the reader goes on; otherwise the reader is
  refused before it reads, with KEPT_TABLE_REFUSED naming the table, the run that kept it and the
  check. Because the check task lives in the reader, `dbt build --select <reader>` gets it too.
  Emits no SQL (returns ''), so the hook itself runs nothing.

  `tables`: [{'table': <entity>, 'relation': <the entity's published relation>}], with
  'history': true when the reader is that entity's own type-2 history: a mark this run's build of
  the entity set does not refuse it, since keep publishes the whole entity (decision 1127); a mark
  of an earlier run is gated as for any reader.
#}
{% macro kept_gate(tables, meta_schema) %}
  {{ return(adapter.dispatch('kept_gate', 'assay')(tables, meta_schema)) }}
{% endmacro %}

{% macro default__kept_gate(tables, meta_schema) %}
  {%- if not execute or not meta_schema -%}{{ return('') }}{%- endif -%}
  {%- for t in tables -%}
    {%- set mark = assay._kept_mark(t['relation'].database, meta_schema, t['table']) -%}
    {%- if mark is not none -%}
      {%- set refused = 'KEPT_TABLE_REFUSED: ' ~ model.name ~ ' reads ' ~ t['relation'] ~ ', which is kept since run '
          ~ mark['run_id'] ~ ' (check ' ~ mark['check'] ~ ' failed)' -%}
      {%- if mark['run_id'] == invocation_id and t.get('history') -%}
        {#- The entity's own type-2 history, after this run's build of the entity kept it: the
            history is part of what was published (decision 1127); its post-hook fails the node. -#}
        {%- do log('assay: ' ~ t['table'] ~ ' was kept by this run; its history versions what was published', info=true) -%}
      {%- else -%}
      {%- if mark['run_id'] == invocation_id -%}
        {{ exceptions.raise_compiler_error(refused ~ '; it was kept in this run, so nothing reads it before its checks pass.') }}
      {%- endif -%}
      {%- set task = assay._kept_check_task(t['relation'], t['table'], meta_schema) -%}
      {%- if not task['ran'] -%}
        {{ exceptions.raise_compiler_error(refused ~ '; this project version has no checks for it any more, so only building '
            ~ t['table'] ~ ' again clears the mark.') }}
      {%- endif -%}
      {%- if task['failures'] -%}
        {%- do assay._record_events(t['relation'].database, meta_schema, task['events']) -%}
        {{ adapter.commit() }}
        {{ exceptions.raise_compiler_error(refused ~ '; its checks ran again in this run and did not pass: '
            ~ (task['failures'] | join('; ')) ~ '. Fix the data or the check, then run again.') }}
      {%- endif -%}
      {%- do assay._record_events(t['relation'].database, meta_schema,
            [{'type': 'TABLE_KEPT_CLEARED', 'table': t['table'], 'check': mark['check'], 'why': 'checks_passed'}]) -%}
      {{ adapter.commit() }}
      {%- do log('assay: ' ~ t['table'] ~ ' was kept since run ' ~ mark['run_id'] ~ '; its checks passed in this run, so the mark is cleared', info=true) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}
