{% macro _drop_if_exists(relation) %}
  {%- set found = adapter.get_relation(database=relation.database, schema=relation.schema, identifier=relation.identifier) -%}
  {%- if found is not none -%}
    {% do adapter.drop_relation(found) %}
  {%- endif -%}
{% endmacro %}
