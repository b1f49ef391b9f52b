{#- <meta>.assay_events, created when missing, with the columns of generator/assay/retention.py's
    EVENTS_COLUMNS (the one definition; tests/integration/test_operator_commands_sqlmesh.py checks
    that the table this creates has exactly those columns and types). -#}
{% macro _ensure_events_table(database, schema) %}
  {%- set relation = api.Relation.create(database=database, schema=schema, identifier='assay_events', type='table') -%}
  {%- if adapter.get_relation(database=database, schema=schema, identifier='assay_events') is none -%}
    {% do adapter.create_schema(relation) %}
    {% call statement('assay_create_events') -%}
      create table if not exists {{ relation }} (
        event_id {{ assay.sql_type('string') }}, event_type {{ assay.sql_type('string') }},
        run_id {{ assay.sql_type('string') }}, table_name {{ assay.sql_type('string') }},
        check_name {{ assay.sql_type('string') }}, why {{ assay.sql_type('string') }},
        row_count {{ assay.sql_type('int') }}, cutoff {{ assay.sql_type('timestamp') }},
        occurred_at {{ assay.sql_type('timestamp') }}
      )
    {%- endcall %}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}
