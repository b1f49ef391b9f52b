{#
  True when this invocation selected the model `name` of the root project, so that a node
  downstream of it reads what this build wrote (decision 0411): dbt runs a selected model
  before its dependents and skips them when it fails. A model left from an earlier build may be
  older than the data it describes, so a node that finds it unselected computes the same rows
  itself.
#}
{% macro built_this_run(name) -%}
  {%- if not execute or graph is not defined -%}{{ return(false) }}{%- endif -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name and node.name == name -%}
      {{ return(node.unique_id in selected_resources) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(false) }}
{%- endmacro %}
