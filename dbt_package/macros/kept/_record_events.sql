{#- Appends state changes to <meta>.assay_events (decision 0510), creating it when a node runs before
    the generated assay_events model ever did. Each event: {'type', 'table', 'check', 'why', 'rows'}.
    Appending only (never updating) keeps parallel writers free of conflicts; the caller commits. -#}
{% macro _record_events(database, schema, events) %}
  {%- set schema = assay._built_meta_schema(schema) -%}
  {%- if not events -%}{{ return(none) }}{%- endif -%}
  {%- set relation = assay._events_relation(database, schema) -%}
  {%- if adapter.get_relation(database=database, schema=schema, identifier='assay_events') is none -%}
    {% do adapter.create_schema(relation) %}
    {% call statement('assay_create_events') -%}
      create table if not exists {{ relation }} as {{ assay.events_select() }}
    {%- endcall %}
  {%- endif -%}
  {%- do assay._shared_append_table(relation) -%}
  {% call statement('assay_record_events') -%}
    {#- SELECT ... UNION ALL rather than VALUES: Spark refuses uuid() (nondeterministic) in VALUES. -#}
    insert into {{ relation }} (event_id, event_type, run_id, table_name, check_name, why, row_count, cutoff, occurred_at)
    {%- for e in events %}
      select {{ assay._new_event_id() }}, {{ assay.string_literal(e['type']) }},
       {{ assay.string_literal(invocation_id) }}, {{ assay.string_literal(e['table']) }},
       {{ assay.string_literal(e['check']) if e.get('check') is not none else 'null' }},
       {{ assay.string_literal(e['why']) if e.get('why') is not none else 'null' }},
       {{ e['rows'] if e.get('rows') is not none else 'cast(null as ' ~ assay.sql_type('int') ~ ')' }}, cast(null as {{ assay.sql_type('timestamp') }}),
       {{ assay.utc_now() }}{{ ' union all' if not loop.last }}
    {%- endfor %}
  {%- endcall %}
{% endmacro %}
