{#- Where the engine can catch an error or stop a query only from Python, the measuring query of an
    entity's declared checks runs there, before `_run_declared_checks` reads its outcome (decisions
    0531, 0533): returns none (nothing to do) or {'code': <Python>}, which the materialization runs
    as a Python statement (dbt lets only a materialization submit one). -#}
{% macro _declared_check_probe(candidate, audits_macro, key_proven=false) %}
  {{ return(adapter.dispatch('_declared_check_probe', 'assay')(candidate, audits_macro, key_proven)) }}
{% endmacro %}

{% macro default___declared_check_probe(candidate, audits_macro, key_proven=false) %}
  {{ return(none) }}
{% endmacro %}

{#- DuckDB has no statement timeout and no procedural language. The Python statement runs the
    query into a temporary table of the model's own connection, under a timer that interrupts it at
    the time budget (000: then not_evaluated), and keeps the engine's message of any error (an
    errored result); `duckdb___measure_declared` reads the outcome back. -#}
{% macro duckdb___declared_check_probe(candidate, audits_macro, key_proven=false) %}
  {%- if not audits_macro -%}{{ return(none) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_declared__') -%}
  {%- set declared_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if declared_of is none -%}{{ return(none) }}{%- endif -%}
  {%- set declared = declared_of(candidate) -%}
  {%- if key_proven and declared.get('key_proven_sql') -%}{%- do declared.update({'sql': declared['key_proven_sql']}) -%}{%- endif -%}
  {%- set budget = declared.get('budget') or {'scan_bytes': 68719476736, 'time_seconds': 900} -%}
  {%- set code -%}
import threading

CANDIDATE = {{ tojson(candidate | string) }}  # JSON strings are Python string literals
SQL = {{ tojson(declared['sql']) }}
SECONDS = {{ budget['time_seconds'] }}


class dbtObj:
    def __init__(self, load_df_function):
        pass


def model(dbt, con):
    con.execute("create or replace temporary table assay_declared_outcome (candidate varchar, status varchar, message varchar)")
    fired = threading.Event()

    def stop():
        fired.set()
        con.interrupt()

    timer = threading.Timer(SECONDS, stop)
    timer.start()
    try:
        con.execute("create or replace temporary table assay_declared_row as " + SQL)
        status, message = "ok", None
    except Exception as exc:  # the engine's error (or the interruption) is the checks' result
        status = "timeout" if fired.is_set() else "error"
        message = (str(exc.__cause__ or exc).strip().splitlines() or [type(exc).__name__])[0]
    finally:
        timer.cancel()
    con.execute("insert into assay_declared_outcome values (?, ?, ?)", [CANDIDATE, status, message])
    return con.query("select 1")


def materialize(df, con):
    pass
  {%- endset -%}
  {{ return({'code': code}) }}
{% endmacro %}
