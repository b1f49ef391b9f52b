{#
  SQL check files (document 002) of an entity, run on its candidate.

  Each check returns the rows that are wrong; it is counted once, through `_try_count`, so a check
  whose query errors is a result (`errored`, with the engine's message) rather than the end of
  the node (decision 0511). `block` with rows, or errored, sets the table back (returned as a
  failure sentence); `warn` with rows is logged and published; `keep` with rows is published and
  the table is kept (the materialization marks it). Every result is recorded in
  <meta>.assay_check_results with kind 'sql'.

  `report`, when given ({'kept': [], 'failed': [], 'outcomes': {}}), collects the names of the keep checks that
  failed and the non-blocking checks that failed or errored (for their CHECK_FAILED events);
  its `outcomes` are counts made beforehand, by count query.
#}
{% macro _run_sql_checks(candidate, audits_macro, results_schema, table=none, report=none) %}
  {%- set failures = [] -%}
  {%- if not audits_macro -%}{{ return(failures) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_sqlchecks__') -%}
  {%- set checks_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if checks_of is none -%}{{ return(failures) }}{%- endif -%}
  {#- The table the results are recorded under: the one given (a table assay only reads), else the
      entity whose audits these are, never its candidate's node (a type-2 entity's checks run on
      `<entity>__current`, and its results are the entity's, as its declared checks' are). -#}
  {%- set own = table or (audits_macro | replace('assay_audits__', '')) -%}
  {%- set results = [] -%}
  {%- for check in checks_of(candidate) -%}
    {%- set count_sql = assay._sql_check_count_sql(check) -%}
    {#- Counted already where the engine can only catch an error in Python (_sql_check_probe). -#}
    {%- set counted = report['outcomes'][count_sql] if report is not none and count_sql in report.get('outcomes', {}) else assay._try_count(count_sql) -%}
    {%- if counted['error'] is not none and check.get('private') -%}
      {#- a spec with pii fields or redactions: the engine may give a value the check read -#}
      {%- set counted = {'n': counted['n'], 'error': assay._engine_message(counted['error'])} -%}
    {%- endif -%}
    {%- set n = counted['n'] -%}
    {%- set spec = {'check_id': check['name'], 'position': 1000 + loop.index, 'kind': 'sql', 'enforcement': check['on_failure'],
                    'columns': [], 'types': [], 'bounds': {'on_failure': check['on_failure']}} -%}
    {%- if counted['error'] is not none -%}
      {#- An errored check passes nothing; its row count is unknown, recorded as 0 beside the error. -#}
      {%- do results.append({'check': spec, 'measures': {'rows': 0, 'failing_rows': none, 'error': counted['error']}, 'passed': false}) -%}
      {%- if check['on_failure'] == 'block' -%}
        {%- do failures.append(check['name'] ~ ': errored: ' ~ counted['error']) -%}
      {%- else -%}
        {%- do log('assay: check ' ~ check['name'] ~ ' errored (' ~ check['on_failure'] ~ ', the run goes on): ' ~ counted['error'], info=true) -%}
        {%- if report is not none -%}
          {%- do report['failed'].append({'check': check['name'], 'why': 'errored: ' ~ counted['error']}) -%}
        {%- endif -%}
      {%- endif -%}
    {%- else -%}
      {%- do results.append({'check': spec, 'measures': {'rows': n, 'failing_rows': n}, 'passed': assay._sql_check_passed(n, check['on_failure'])}) -%}
      {#- What the check returned is kept without the columns its lineage ties to a pii value
          (`redact`, decided by the generator), and not at all when it could not be traced. -#}
      {%- if n > 0 and check.get('keep_rows', true) -%}
        {%- do assay._capture_check_rows(candidate, audits_macro, results_schema, own, check['name'], check['sql'], check.get('redact', [])) -%}
      {%- elif n > 0 -%}
        {%- do log('assay: the rows check ' ~ check['name'] ~ ' returned are not kept: its output columns cannot be traced to the columns they come from, so any may carry a pii value', info=true) -%}
      {%- endif -%}
      {%- if n > 0 and check['on_failure'] == 'block' -%}
        {%- do failures.append(check['name'] ~ ': returned ' ~ n ~ ' row' ~ ('' if n == 1 else 's')) -%}
      {%- elif n > 0 -%}
        {%- do log('assay: check ' ~ check['name'] ~ ' ' ~ ('warned' if check['on_failure'] == 'warn' else 'failed (kept)') ~ ': ' ~ n ~ ' row' ~ ('' if n == 1 else 's'), info=true) -%}
        {%- if report is not none and check['on_failure'] == 'keep' -%}
          {%- do report['kept'].append(check['name']) -%}
          {%- do report['failed'].append({'check': check['name'], 'why': 'returned ' ~ n ~ ' row' ~ ('' if n == 1 else 's'), 'rows': n}) -%}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do assay._record_check_results(candidate.database, results_schema, own, results) -%}
  {{ return(failures) }}
{% endmacro %}
