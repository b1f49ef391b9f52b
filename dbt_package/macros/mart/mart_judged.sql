{#- Whether gold.mart_data_quality records an entity in this invocation (decision 0987), as a SQL
    condition for the mart's WHERE clause: only when the invocation selected both the entity's
    staged model, which judges bronze, and the model that audits and publishes it (`audited`: the
    entity, or a type-2 entity's `__current`). A selection that leaves either out (`dbt run --select
    mart_data_quality`, `--exclude <entity>`) built nothing of the entity, and a mart row would claim
    a run of it that did not happen; a selected entity that dbt then skips, or whose checks set it
    back, is a judged run and is recorded (decision 0413). -#}
{% macro mart_judged(staged, audited) -%}
  {{- return(adapter.dispatch('mart_judged', 'assay')(staged, audited)) -}}
{%- endmacro %}

{% macro default__mart_judged(staged, audited) -%}
  {{- return('1 = 1' if assay.built_this_run(staged) and assay.built_this_run(audited) else '1 = 0') -}}
{%- endmacro %}
