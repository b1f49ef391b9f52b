{#- Runs the one measuring query of a table's declared checks (decision 0530, 0531) and returns
    {'status': 'ok', 'row': <its row>}, or {'status': 'timeout'} past the time budget, or
    {'status': 'error', 'message': <why>} when the candidate cannot be read. dbt's Jinja cannot
    catch a database error, so each engine gets as close as it can: -#}
{% macro _measure_declared(candidate, declared) %}
  {{ return(adapter.dispatch('_measure_declared', 'assay')(candidate, declared)) }}
{% endmacro %}

{#- DuckDB (and any engine without a procedural language): no statement timeout and no way to
    catch an error, so the columns the checks read are probed first from the candidate's metadata;
    a missing one is an error result, any other error still stops the node. The time budget is not
    enforced here (decision 0530). -#}
{% macro default___measure_declared(candidate, declared) %}
  {%- set present = [] -%}
  {%- for c in adapter.get_columns_in_relation(candidate) -%}{%- do present.append(c.name | lower) -%}{%- endfor -%}
  {%- set missing = [] -%}
  {%- for check in declared['checks'] -%}
    {%- for c in check['columns'] -%}
      {%- if c | lower not in present and c not in missing -%}{%- do missing.append(c) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {%- if missing -%}
    {{ return({'status': 'error', 'message': 'the candidate ' ~ candidate ~ ' has no column ' ~ (missing | join(', '))}) }}
  {%- endif -%}
  {{ return({'status': 'ok', 'row': run_query(declared['sql']).rows[0]}) }}
{% endmacro %}

{#- PostgreSQL: the query runs inside a DO block under `statement_timeout` (the time budget); the
    block catches the cancellation and any error, so the engine's own message is recorded and the
    node goes on. The row lands in a temporary table, read back in the same session. -#}
{% macro postgres___measure_declared(candidate, declared) %}
  {#- A hand-written declared macro may state no budget: 000's default then holds. -#}
  {%- set seconds = (declared.get('budget') or {}).get('time_seconds', 900) -%}
  {%- set previous = run_query('show statement_timeout').rows[0][0] -%}
  {#- The query holds spec text (check columns are validated names, but bounds and patterns are
      literals): the body's dollar-quote tag is one it does not contain, so nothing ends the
      block early and runs as a statement of its own (issue 21). -#}
  {%- set tag = assay._free_dollar_tag(declared['sql']) -%}
  {% call statement('assay_measure_declared') -%}
    drop table if exists pg_temp.assay_declared_row;
    drop table if exists pg_temp.assay_declared_outcome;
    create temporary table assay_declared_outcome (status text, message text);
    set local statement_timeout = {{ seconds * 1000 }};
    do ${{ tag }}$
    begin
      create temporary table assay_declared_row as {{ declared['sql'] }};
      insert into assay_declared_outcome values ('ok', null);
    exception
      when query_canceled then insert into assay_declared_outcome values ('timeout', sqlerrm);
      when others then insert into assay_declared_outcome values ('error', sqlerrm);
    end
    ${{ tag }}$;
    set local statement_timeout = {{ assay.string_literal(previous) }};
  {%- endcall %}
  {%- set outcome = run_query('select status, message from pg_temp.assay_declared_outcome').rows[0] -%}
  {%- if outcome[0] != 'ok' -%}
    {{ return({'status': outcome[0], 'message': outcome[1]}) }}
  {%- endif -%}
  {{ return({'status': 'ok', 'row': run_query('select * from pg_temp.assay_declared_row').rows[0]}) }}
{% endmacro %}

{#- DuckDB: the materialization ran the query from Python beforehand (`_declared_check_probe`), under
    the time budget and catching any error; this reads that outcome. A caller without the probe (a
    check task) falls back to the metadata probe of the default. -#}
{% macro duckdb___measure_declared(candidate, declared) %}
  {%- set probed = run_query("select count(*) from duckdb_tables() where temporary and table_name = 'assay_declared_outcome'").columns[0].values()[0] -%}
  {%- set outcome = none -%}
  {%- if probed | int > 0 -%}
    {%- set rows = run_query('select status, message from temp.main.assay_declared_outcome where candidate = ' ~ assay.string_literal(candidate | string)).rows -%}
    {%- if rows | length > 0 -%}{%- set outcome = rows[0] -%}{%- endif -%}
  {%- endif -%}
  {%- if outcome is none -%}
    {{ return(assay.default___measure_declared(candidate, declared)) }}
  {%- elif outcome[0] != 'ok' -%}
    {{ return({'status': outcome[0], 'message': outcome[1]}) }}
  {%- endif -%}
  {{ return({'status': 'ok', 'row': run_query('select * from temp.main.assay_declared_row').rows[0]}) }}
{% endmacro %}
