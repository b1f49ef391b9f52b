{#- One row per run, table and check. The check's own definition (columns, their types,
    bounds) is recorded beside the measurements, so a result reads the same after the spec
    changes. -#}
{% macro check_results_select() %}
  {{ return(adapter.dispatch('check_results_select', 'assay')()) }}
{% endmacro %}

{% macro default__check_results_select() %}
  select
    cast(null as {{ assay.sql_type('string') }}) as run_id,
    cast(null as {{ assay.sql_type('string') }}) as table_name,
    cast(null as {{ assay.sql_type('string') }}) as check_id,
    cast(null as {{ assay.sql_type('int') }}) as check_position,
    cast(null as {{ assay.sql_type('string') }}) as kind,
    cast(null as {{ assay.sql_type('string') }}) as enforcement,
    cast(null as {{ assay.sql_type('bool') }}) as passed,
    cast(null as {{ assay.sql_type('int') }}) as row_count,
    cast(null as {{ assay.sql_type('string') }}) as check_spec,
    cast(null as {{ assay.sql_type('string') }}) as measures,
    cast(null as {{ assay.sql_type('timestamp') }}) as recorded_at
  where 1 = 0
{% endmacro %}
