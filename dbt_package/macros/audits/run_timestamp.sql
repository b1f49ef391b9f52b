{# When this dbt invocation started, as a timestamp literal: one value for every row a run writes. #}
{% macro run_timestamp() %}
  {{- return(adapter.dispatch('run_timestamp', 'assay')()) -}}
{% endmacro %}

{% macro default__run_timestamp() -%}
  cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S.%f") }}' as {{ assay.sql_type('timestamp') }})
{%- endmacro %}
