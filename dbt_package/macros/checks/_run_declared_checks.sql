{#
  Declared table checks (document 000) of an entity, evaluated on its candidate.

  The generator writes `default__assay_declared__<entity>(candidate)` beside the entity's
  audits; it returns the one measuring query of the table and a descriptor per check naming
  the columns of that query's single row the check reads. This macro runs the query once,
  decides every check from the measured numbers, records every result (passing and failing)
  in <meta>.assay_check_results, and returns one `CHECK_ID: detail` sentence per failed
  required check. The sentences here are short; `assay checks RUN_ID` renders 000's exact
  ones from the recorded numbers.
#}
{% macro _run_declared_checks(candidate, audits_macro) %}
  {%- set failures = [] -%}
  {%- if not audits_macro -%}{{ return(failures) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_declared__') -%}
  {%- set declared_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if declared_of is none -%}{{ return(failures) }}{%- endif -%}
  {%- set declared = declared_of(candidate) -%}
  {%- set row = run_query(declared['sql']).rows[0] -%}
  {%- set results = [] -%}
  {%- for check in declared['checks'] -%}
    {%- set measured = assay._declared_measures(check, row) -%}
    {%- set m = measured['measures'] -%}
    {%- set gap = measured['gap'] -%}
    {%- set verdict = assay._declared_verdict(check, m, gap) -%}
    {%- do results.append({'check': check, 'measures': m, 'passed': verdict['passed']}) -%}
    {%- if check['blocking'] and not verdict['passed'] -%}
      {%- do failures.append(check['check_id'] ~ ': ' ~ verdict['detail']) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do assay._record_check_results(candidate.database, declared['results_schema'], declared['table'], results) -%}
  {{ return(failures) }}
{% endmacro %}
