{#- The count of one query as a value, or the engine's error as a value: {'n': <int or none>,
    'error': <the engine's message or none>} (decision 0511). dbt's Jinja cannot catch a database
    error (run_query raises), so each engine turns the error into a row where it can. -#}
{% macro _try_count(sql) %}
  {{ return(adapter.dispatch('_try_count', 'assay')(sql)) }}
{% endmacro %}

{#- An engine with no way to catch here: the error stops the node. On DuckDB the materialization
    counts the SQL checks beforehand in Python (_sql_check_probe), so this runs only in a check task. -#}
{% macro default___try_count(sql) %}
  {{ return({'n': run_query(sql).columns[0].values()[0] | int, 'error': none}) }}
{% endmacro %}

{#- PostgreSQL: a DO block runs the count; its exception handler (a subtransaction) catches any
    error, so the surrounding transaction, and the candidate it created, survive. The outcome lands
    in a temporary table read back in the same session.

    The count itself runs read-only (issue 21, `_read_only_into`): the server refuses any write the
    check's SQL attempts (an `errored` result). -#}
{% macro postgres___try_count(sql) %}
  {%- set tag = assay._free_dollar_tag(sql) -%}
  {% call statement('assay_try_count') -%}
    drop table if exists pg_temp.assay_try_count;
    create temporary table assay_try_count (n bigint, error text);
    do ${{ tag }}$
    declare assay_n bigint;
    begin
      {{ assay._read_only_into(sql, 'assay_n') }}
      insert into assay_try_count values (assay_n, null);
    exception when others then
      insert into assay_try_count values (null, sqlerrm);
    end
    ${{ tag }}$;
  {%- endcall %}
  {%- set row = run_query('select n, error from pg_temp.assay_try_count').rows[0] -%}
  {{ return({'n': (row[0] | int) if row[0] is not none else none, 'error': row[1]}) }}
{% endmacro %}
