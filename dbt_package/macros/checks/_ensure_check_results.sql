{#- The generated `assay_check_results` model creates the table before any entity that records
    into it (parallel entities would otherwise race to create it). This covers a node run on its
    own (`dbt build --select`) before that model ever ran. Several nodes append to the table at
    once: `_shared_append_table` readies it for that on every call. -#}
{% macro _ensure_check_results(database, schema) %}
  {%- set schema = assay._built_meta_schema(schema) -%}
  {%- set relation = assay._check_results_relation(database, schema) -%}
  {%- if adapter.get_relation(database=database, schema=schema, identifier='assay_check_results') is none -%}
    {% do adapter.create_schema(relation) %}
    {% call statement('assay_create_check_results') -%}
      create table if not exists {{ relation }} as {{ assay.check_results_select() }}
    {%- endcall %}
  {%- endif -%}
  {%- do assay._shared_append_table(relation) -%}
  {{ return(relation) }}
{% endmacro %}
