{#- Whether the type-2 history named `name` (a snapshot, or the assay_history model where the
    adapter builds it; decision 0807) runs in this invocation, after the `__current` that asks. -#}
{% macro _history_runs(name) %}
  {%- if not name or selected_resources is not defined -%}{{ return(false) }}{%- endif -%}
  {%- set pkg = model.package_name -%}
  {{ return(('snapshot.' ~ pkg ~ '.' ~ name) in selected_resources or ('model.' ~ pkg ~ '.' ~ name) in selected_resources) }}
{% endmacro %}
