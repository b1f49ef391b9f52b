{#
  Where an incremental entity's window starts: the newest `_ingested_at` its ledger
  (`relation`, the staged model) already holds, minus the arrival lag in hours.
  NULL while the ledger is empty, which the caller reads as "nothing is late".
#}
{% macro incremental_window_start(relation, lag_hours) %}
  {{ return(adapter.dispatch('incremental_window_start', 'assay')(relation, lag_hours)) }}
{% endmacro %}

{% macro default__incremental_window_start(relation, lag_hours) -%}
  {%- set newest = '(select max(_ingested_at) from ' ~ relation ~ ')' -%}
  {%- if lag_hours | int == 0 -%}
    {{ newest }}
  {%- else -%}
    {#- to the microsecond on every engine (decision 0994: dbt-spark's dateadd counts whole seconds) -#}
    {{ assay._shift_minutes(newest, -(lag_hours | int) * 60) }}
  {%- endif -%}
{%- endmacro %}
