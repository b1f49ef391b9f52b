{#- The schema dbt built the project's meta models (assay_events, assay_check_results) into, for
    the meta schema `name` the spec names: what the project's generate_schema_name made of it
    (dbt's default makes `<target schema>_<name>`). The materializations, the kept gate and
    `maintain` record and read events and check results there, where the generated models and
    assay's commands (runtime/built_relations.py) find them, not in a second schema spelled as in
    the spec (decision 0930). `name` none: the first meta model's schema. Outside execution, or
    when the project has no meta model, `name` itself. -#}
{% macro _built_meta_schema(name) %}
  {%- if not execute or graph is not defined -%}{{ return(name) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name
          and node.name in ('assay_events', 'assay_check_results')
          and (name is none or node.config.get('schema') == name) -%}
      {{ return(node.schema) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(name) }}
{% endmacro %}
