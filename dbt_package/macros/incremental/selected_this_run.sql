{#
  True when this invocation selected the root project's node `name` of one of `resource_types`
  (dbt's words: model, snapshot, test, ...); false otherwise and at parse time. `selected_resources`
  is what the command runs after its selection, so `dbt run` selects no test (decision 0987).
#}
{% macro selected_this_run(name, resource_types) -%}
  {%- if not execute or graph is not defined -%}{{ return(false) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type in resource_types and node.package_name == project_name and node.name == name -%}
      {{ return(node.unique_id in selected_resources) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(false) }}
{%- endmacro %}
