{% macro _events_relation(database, schema) %}
  {{ return(api.Relation.create(database=database, schema=schema, identifier='assay_events', type='table')) }}
{% endmacro %}
