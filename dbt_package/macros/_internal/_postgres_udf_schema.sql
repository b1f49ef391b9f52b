{% macro _postgres_udf_schema() -%}
  {{ adapter.quote(target.schema) }}
{%- endmacro %}
