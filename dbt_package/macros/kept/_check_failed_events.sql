{#- One CHECK_FAILED event per check that failed or errored in a build: the blocking failures (the
    `CHECK_ID: detail` sentences of audits, declared and SQL checks) and what `report` collected
    (keep failures, errored warn and keep checks). Passed and warned checks are results only (002).
    An audit's failure (`CONSERVATION: 3 violating rows`) records no result: its count is the
    event's row_count, which `assay checks` and `assay check list` show (decision 0941). -#}
{% macro _check_failed_events(table, failures, report) %}
  {%- set events = [] -%}
  {%- for f in failures -%}
    {%- set parts = f.split(': ', 1) -%}
    {%- set why = parts[1] if parts | length > 1 else f -%}
    {%- set words = why.split(' ') -%}
    {%- set n = words[0] | int if words | length == 3 and words[1] == 'violating' and words[0].isdigit() else none -%}
    {%- do events.append({'type': 'CHECK_FAILED', 'table': table, 'check': parts[0], 'why': why, 'rows': n}) -%}
  {%- endfor -%}
  {%- for f in report['failed'] -%}
    {%- do events.append({'type': 'CHECK_FAILED', 'table': table, 'check': f['check'], 'why': f['why'], 'rows': f.get('rows')}) -%}
  {%- endfor -%}
  {{ return(events) }}
{% endmacro %}
