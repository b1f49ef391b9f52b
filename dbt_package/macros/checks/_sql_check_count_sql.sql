{#- The query that counts the rows one SQL check file returns. -#}
{% macro _sql_check_count_sql(check) %}
  {{ return('select count(*) from (\n' ~ check['sql'] ~ '\n) as assay_check') }}
{% endmacro %}
