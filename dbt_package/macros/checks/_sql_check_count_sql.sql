{#- The query that counts the rows one SQL check file returns. It counts each row's JSON, so the
    engine computes every column the check returns, as keeping its rows does: an engine may skip a
    column a bare count(*) does not read, and an error there (a cast that fails only on some row)
    then surfaced in the keeping, uncaught, stopping the node with the value in dbt's message (an
    outside tester, session 40). Now it is the count's error: a result, errored, its value hidden. -#}
{% macro _sql_check_count_sql(check) %}
  {{ return('select count(' ~ assay.row_json('assay_check') ~ ') from (\n' ~ check['sql'] ~ '\n) as assay_check') }}
{% endmacro %}
