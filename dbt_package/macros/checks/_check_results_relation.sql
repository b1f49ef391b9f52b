{% macro _check_results_relation(database, schema) %}
  {{ return(api.Relation.create(database=database, schema=schema, identifier='assay_check_results', type='table')) }}
{% endmacro %}
