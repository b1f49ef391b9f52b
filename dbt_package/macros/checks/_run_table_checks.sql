{#
  Every check of a table assay only reads (`tables_version: 1`), run on the table as it is
  (decision 0520): its declared checks (000) in one query and its SQL check files (002), all
  recorded in <meta>.assay_check_results under the table's `schema.table` name. Returns one
  sentence per failed blocking check: `required`, `block`, and `keep`, which on a table the
  project only reads fails its task and sets no mark (002, decision 0523); a `keep` check that
  errored fails it too. A `warn` check that failed or errored is recorded and logged only. The
  generated macros are found from the `assay_audits` name, as for an entity.
#}
{% macro _run_table_checks(relation, audits_macro, table, results_schema, report) %}
  {#- `report` ({'kept': [], 'failed': [], 'outcomes': {...}}): the SQL checks' counts made beforehand
      where the engine catches errors only in Python (`_sql_check_probe`, run by the materialization). -#}
  {%- set failures = assay._run_declared_checks(relation, audits_macro) -%}
  {%- do failures.extend(assay._run_sql_checks(relation, audits_macro, results_schema, table, report)) -%}
  {#- One CHECK_FAILED event per check that failed or errored (the blocking ones, then the keep and
      errored ones `report` collected); a table assay only reads has no other state change. -#}
  {%- do assay._record_events(relation.database, results_schema, assay._check_failed_events(table, failures, report)) -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_sqlchecks__') -%}
  {%- set checks_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- set keeps = [] -%}
  {%- if checks_of is not none -%}
    {%- for check in checks_of(relation) if check['on_failure'] == 'keep' -%}{%- do keeps.append(check['name']) -%}{%- endfor -%}
  {%- endif -%}
  {%- for failed in report['failed'] if failed['check'] in keeps -%}
    {%- do failures.append(failed['check'] ~ ': ' ~ failed['why'] ~ ' (keep: ' ~ table ~ ' is not built by assay, so it is not marked)') -%}
  {%- endfor -%}
  {{ return(failures) }}
{% endmacro %}
