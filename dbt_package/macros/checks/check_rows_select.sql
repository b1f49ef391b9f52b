{#- The rows failing checks found, kept from the checked candidate (`assay check rows`): one row
    per run, table, check and kept row, the row as JSON text. -#}
{% macro check_rows_select() %}
  {{ return(adapter.dispatch('check_rows_select', 'assay')()) }}
{% endmacro %}

{% macro default__check_rows_select() %}
  select
    cast(null as {{ assay.sql_type('string') }}) as run_id,
    cast(null as {{ assay.sql_type('string') }}) as table_name,
    cast(null as {{ assay.sql_type('string') }}) as check_id,
    cast(null as {{ assay.sql_type('int') }}) as row_number,
    cast(null as {{ assay.sql_type('string') }}) as row_json
  where 1 = 0
{% endmacro %}
