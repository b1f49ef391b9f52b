{#- The clock of `maintain`: `now` (ISO 8601 text, an offset converted to UTC) or when this dbt
    invocation started, as a naive UTC datetime like every timestamp assay writes. -#}
{% macro _maintenance_clock(now) %}
  {%- if now is none or now == '' -%}
    {{ return(run_started_at.replace(tzinfo=none)) }}
  {%- endif -%}
  {%- set value = modules.datetime.datetime.fromisoformat((now | string).replace('Z', '+00:00')) -%}
  {%- if value.tzinfo is not none -%}
    {%- set value = value.astimezone(modules.pytz.utc).replace(tzinfo=none) -%}
  {%- endif -%}
  {{ return(value) }}
{% endmacro %}
