{#- Where the engine cannot catch an error in SQL, the SQL checks of an entity are counted before
    `_run_sql_checks` reads them (decision 0511): returns none (nothing to do) or {'code': <Python>},
    which the materialization runs as a Python statement (dbt lets only a materialization submit one)
    and reads back with `_sql_check_outcomes`. -#}
{% macro _sql_check_probe(candidate, audits_macro) %}
  {{ return(adapter.dispatch('_sql_check_probe', 'assay')(candidate, audits_macro)) }}
{% endmacro %}

{% macro default___sql_check_probe(candidate, audits_macro) %}
  {{ return(none) }}
{% endmacro %}

{#- DuckDB has no procedural language, and an error inside a transaction aborts it. dbt-duckdb runs
    Python on the model's own connection (as it runs Python models), and Python can catch: the
    materialization commits first (the candidate is kept either way), each count then runs in
    autocommit, where an error ends only its own statement, and the outcomes land in a temporary
    table of the same connection. -#}
{% macro duckdb___sql_check_probe(candidate, audits_macro) %}
  {%- if not audits_macro -%}{{ return(none) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_sqlchecks__') -%}
  {%- set checks_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if checks_of is none -%}{{ return(none) }}{%- endif -%}
  {%- set queries = [] -%}
  {%- for check in checks_of(candidate) -%}{%- do queries.append(assay._sql_check_count_sql(check)) -%}{%- endfor -%}
  {%- set code -%}
QUERIES = {{ tojson(queries) }}  # JSON strings are Python string literals


class dbtObj:
    def __init__(self, load_df_function):
        pass


def model(dbt, con):
    con.execute("create or replace temporary table assay_sql_check_outcomes (sql_text varchar, n bigint, error varchar)")
    for sql in QUERIES:
        try:
            n, error = con.execute(sql).fetchone()[0], None
        except Exception as exc:  # the engine's error is the check's result
            n, error = None, str(exc.__cause__ or exc).split("\n\n")[0].strip()
        con.execute("insert into assay_sql_check_outcomes values (?, ?, ?)", [sql, n, error])
    return con.query("select 1")


def materialize(df, con):
    pass
  {%- endset -%}
  {{ return({'code': code}) }}
{% endmacro %}
