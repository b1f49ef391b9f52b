{#- A fresh id for an event row, as SQL: a random UUID as text. -#}
{% macro _new_event_id() %}
  {{ return(adapter.dispatch('_new_event_id', 'assay')()) }}
{% endmacro %}

{#- PostgreSQL 13+ and DuckDB both have gen_random_uuid(). -#}
{% macro default___new_event_id() %}
  {{ return('cast(gen_random_uuid() as ' ~ assay.sql_type('string') ~ ')') }}
{% endmacro %}

{% macro spark___new_event_id() %}
  {{ return('uuid()') }}
{% endmacro %}
