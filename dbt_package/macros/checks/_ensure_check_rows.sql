{#- The generated `assay_check_results` node creates <meta>.assay_check_rows (a post-hook) before
    any entity captures into it; this covers a node run on its own before that node ever ran.
    Several nodes append to it at once: `_shared_append_table` readies it for that. -#}
{% macro _ensure_check_rows(database, schema) %}
  {%- set schema = assay._built_meta_schema(schema) -%}
  {%- set relation = api.Relation.create(database=database, schema=schema, identifier='assay_check_rows', type='table') -%}
  {%- if adapter.get_relation(database=database, schema=schema, identifier='assay_check_rows') is none -%}
    {% do adapter.create_schema(relation) %}
    {% call statement('assay_create_check_rows') -%}
      create table if not exists {{ relation }} as {{ assay.check_rows_select() }}
    {%- endcall %}
  {%- endif -%}
  {%- do assay._shared_append_table(relation) -%}
  {{ return(relation) }}
{% endmacro %}
