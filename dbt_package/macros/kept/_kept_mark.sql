{#- The mark a table carries, read from <meta>.assay_events (decision 0510): the newest of its
    TABLE_KEPT and TABLE_KEPT_CLEARED events decides. Returns {'run_id', 'check', 'occurred_at'}
    of the TABLE_KEPT event when that is the newest, else none (also when no event was ever written). -#}
{% macro _kept_mark(database, schema, table) %}
  {%- set schema = assay._built_meta_schema(schema) -%}
  {%- if not schema or adapter.get_relation(database=database, schema=schema, identifier='assay_events') is none -%}
    {{ return(none) }}
  {%- endif -%}
  {%- set sql -%}
    select event_type, run_id, check_name, cast(occurred_at as {{ assay.sql_type('string') }})
    from {{ assay._events_relation(database, schema) }}
    where table_name = {{ assay.string_literal(table) }} and event_type in ('TABLE_KEPT', 'TABLE_KEPT_CLEARED')
    order by occurred_at desc, event_type desc
    limit 1
  {%- endset -%}
  {%- set rows = run_query(sql).rows -%}
  {%- if rows | length == 0 or rows[0][0] != 'TABLE_KEPT' -%}{{ return(none) }}{%- endif -%}
  {{ return({'run_id': rows[0][1], 'check': rows[0][2], 'occurred_at': rows[0][3]}) }}
{% endmacro %}
