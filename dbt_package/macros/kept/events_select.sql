{#- The columns of <meta>.assay_events, the one table of state changes (decisions 0015, 0510): the
    same names and types `assay maintain` creates it with (assay.retention.EVENTS_COLUMNS). -#}
{% macro events_select() %}
  {{ return(adapter.dispatch('events_select', 'assay')()) }}
{% endmacro %}

{% macro default__events_select() %}
  select
    cast(null as {{ assay.sql_type('string') }}) as event_id,
    cast(null as {{ assay.sql_type('string') }}) as event_type,
    cast(null as {{ assay.sql_type('string') }}) as run_id,
    cast(null as {{ assay.sql_type('string') }}) as table_name,
    cast(null as {{ assay.sql_type('string') }}) as check_name,
    cast(null as {{ assay.sql_type('string') }}) as why,
    cast(null as {{ assay.sql_type('int') }}) as row_count,
    cast(null as {{ assay.sql_type('timestamp') }}) as cutoff,
    cast(null as {{ assay.sql_type('timestamp') }}) as occurred_at
  where 1 = 0
{% endmacro %}
