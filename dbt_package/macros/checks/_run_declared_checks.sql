{#
  Declared table checks (document 000) of an entity, evaluated on its candidate.

  The generator writes `default__assay_declared__<entity>(candidate)` beside the entity's
  audits; it returns the one measuring query of the table, the table's budget and a descriptor
  per check naming the columns of that query's single row the check reads. This macro:

  1. reads the candidate's row count and estimated scan from the engine's metadata
     (`_candidate_size`); over the byte budget the row pass does not run and every row-reading
     check is `not_evaluated` (000), which never fails the run;
  2. otherwise runs the query once (`_measure_declared`: under the time budget where the engine
     has a statement timeout; an unreadable candidate is an errored result for every check);
  3. decides every check from the measured numbers (`row_expectation` from the count, so it
     evaluates over budget too), records every result in <meta>.assay_check_results, keeps the
     rows a failing check found in <meta>.assay_check_rows, and returns one `CHECK_ID: detail`
     sentence per failed or errored required check.

  The sentences here are short; `assay checks RUN_ID` renders 000's exact ones from the
  recorded numbers.
#}
{% macro _run_declared_checks(candidate, audits_macro, key_proven=false) %}
  {%- set failures = [] -%}
  {%- if not audits_macro -%}{{ return(failures) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_declared__') -%}
  {%- set declared_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if declared_of is none -%}{{ return(failures) }}{%- endif -%}
  {%- set declared = declared_of(candidate) -%}
  {#- Only the caller knows the key audit passed on this candidate (decision 1010). -#}
  {%- if key_proven and declared.get('key_proven_sql') -%}{%- do declared.update({'sql': declared['key_proven_sql']}) -%}{%- endif -%}
  {%- set budget = declared.get('budget') or {'scan_bytes': 68719476736, 'time_seconds': 900} -%}
  {%- set size = assay._candidate_size(candidate) -%}
  {%- if size['bytes'] is not none and size['bytes'] > budget['scan_bytes'] -%}
    {%- set outcome = {'status': 'not_evaluated', 'code': 'CHECK_SCAN_BUDGET_EXCEEDED',
                       'estimated_bytes': size['bytes'], 'ceiling_bytes': budget['scan_bytes']} -%}
  {%- else -%}
    {%- set outcome = assay._measure_declared(candidate, declared) -%}
    {%- if outcome['status'] == 'timeout' -%}
      {%- set outcome = {'status': 'not_evaluated', 'code': 'CHECK_TIME_BUDGET_EXCEEDED', 'ceiling_seconds': budget['time_seconds']} -%}
    {%- endif -%}
  {%- endif -%}
  {%- set results = [] -%}
  {%- for check in declared['checks'] -%}
    {%- set unevaluated = outcome['status'] == 'not_evaluated' and check.get('row_reading', true) -%}
    {%- if outcome['status'] == 'ok' -%}
      {%- set measured = assay._declared_measures(check, outcome['row']) -%}
      {%- set m = measured['measures'] -%}
      {%- set verdict = assay._declared_verdict(check, m, measured['gap']) -%}
    {%- elif outcome['status'] == 'not_evaluated' and not check.get('row_reading', true) -%}
      {#- row_expectation reads the count the engine already knows (000: it still reports). -#}
      {%- set m = {'rows': size['rows']} -%}
      {%- set verdict = assay._declared_verdict(check, m, none) -%}
    {%- else -%}
      {%- set verdict = assay._declared_unmeasured(check, outcome, size['rows']) -%}
      {%- set m = verdict['measures'] -%}
    {%- endif -%}
    {%- do results.append({'check': check, 'measures': m, 'passed': verdict['passed']}) -%}
    {%- if outcome['status'] == 'ok' and not verdict['passed'] and check.get('rows_sql') -%}
      {%- do assay._capture_check_rows(candidate, audits_macro, declared['results_schema'], declared['table'],
                                       check['check_id'], check['rows_sql']) -%}
    {%- endif -%}
    {%- if check['blocking'] and not verdict['passed'] and not unevaluated -%}
      {%- do failures.append(check['check_id'] ~ ': ' ~ verdict['detail']) -%}
    {%- elif unevaluated -%}
      {%- do log('assay: ' ~ declared['table'] ~ ': check ' ~ check['check_id'] ~ ' ' ~ verdict['detail'], info=true) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do assay._record_check_results(candidate.database, declared['results_schema'], declared['table'], results) -%}
  {{ return(failures) }}
{% endmacro %}
