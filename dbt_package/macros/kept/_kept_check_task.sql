{#- The check task of a kept table (002 "A later run", decision 0512): every check of the table (its
    declared checks and its SQL check files) runs again on the table as it is published, and every
    result is recorded under this run. Returns {'ran': false} when this project version has no
    check for the table, else {'ran': true, 'failures': [<sentence>, ...], 'events': [...]}: the
    blocking and keep checks that did not pass, and their CHECK_FAILED events. -#}
{% macro _kept_check_task(relation, table, meta_schema) %}
  {%- set audits = 'assay_audits__' ~ table -%}
  {%- set found = [] -%}
  {%- for prefix in ['assay_declared__', 'assay_sqlchecks__'] -%}
    {%- set name = prefix ~ table -%}
    {%- if context.get(name) is not none or context.get('default__' ~ name) is not none -%}{%- do found.append(name) -%}{%- endif -%}
  {%- endfor -%}
  {%- if not found -%}{{ return({'ran': false}) }}{%- endif -%}
  {%- set report = {'kept': [], 'failed': []} -%}
  {%- set failures = assay._run_declared_checks(relation, audits) -%}
  {%- do failures.extend(assay._run_sql_checks(relation, audits, meta_schema, none, report)) -%}
  {%- set events = [] -%}
  {%- for f in failures -%}
    {%- set parts = f.split(': ', 1) -%}
    {%- do events.append({'type': 'CHECK_FAILED', 'table': table, 'check': parts[0], 'why': parts[1] if parts | length > 1 else f}) -%}
  {%- endfor -%}
  {%- for f in report['failed'] -%}
    {%- do events.append({'type': 'CHECK_FAILED', 'table': table, 'check': f['check'], 'why': f['why'], 'rows': f.get('rows')}) -%}
  {%- endfor -%}
  {%- for name in report['kept'] -%}
    {%- do failures.append(name ~ ': failed (kept)') -%}
  {%- endfor -%}
  {{ return({'ran': true, 'failures': failures, 'events': events}) }}
{% endmacro %}
