{#
  True when this invocation selected the model `name` of the root project, so that a node
  downstream of it reads what this build wrote (decision 0411): dbt runs a selected model
  before its dependents and skips them when it fails. A model left from an earlier build may be
  older than the data it describes, so a node that finds it unselected computes the same rows
  itself.
#}
{% macro built_this_run(name) -%}
  {{ return(assay.selected_this_run(name, ['model'])) }}
{%- endmacro %}
