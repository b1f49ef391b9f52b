{#
  SQL check files (document 002) of an entity, run on its candidate.

  Each check returns the rows that are wrong; it is counted once. `block` with rows
  sets the table back (returned as a failure sentence); `warn` with rows is logged and
  published; `keep` with rows is published and recorded as failed (kept). Every result is
  recorded in <meta>.assay_check_results with kind 'sql'. A check whose query errors stops
  the node, which for a `block` check is the set-back 002 asks for; for `warn` and `keep`
  it is stricter than 002 (dbt's Jinja cannot catch a database error).
#}
{% macro _run_sql_checks(candidate, audits_macro, results_schema) %}
  {%- set failures = [] -%}
  {%- if not audits_macro -%}{{ return(failures) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_sqlchecks__') -%}
  {%- set checks_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if checks_of is none -%}{{ return(failures) }}{%- endif -%}
  {%- set results = [] -%}
  {%- for check in checks_of(candidate) -%}
    {%- set n = run_query('select count(*) from (\n' ~ check['sql'] ~ '\n) as assay_check').columns[0].values()[0] | int -%}
    {%- set spec = {'check_id': check['name'], 'position': 1000 + loop.index, 'kind': 'sql', 'enforcement': check['on_failure'],
                    'columns': [], 'types': [], 'bounds': {'on_failure': check['on_failure']}} -%}
    {%- do results.append({'check': spec, 'measures': {'rows': n, 'failing_rows': n}, 'passed': assay._sql_check_passed(n, check['on_failure'])}) -%}
    {%- if n > 0 and check['on_failure'] == 'block' -%}
      {%- do failures.append(check['name'] ~ ': returned ' ~ n ~ ' row' ~ ('' if n == 1 else 's')) -%}
    {%- elif n > 0 -%}
      {%- do log('assay: check ' ~ check['name'] ~ ' ' ~ ('warned' if check['on_failure'] == 'warn' else 'failed (kept)') ~ ': ' ~ n ~ ' rows', info=true) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do assay._record_check_results(candidate.database, results_schema, candidate.identifier | replace('__assay_candidate', ''), results) -%}
  {{ return(failures) }}
{% endmacro %}
