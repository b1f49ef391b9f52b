{#- The staging columns that are dbt's bookkeeping, not the history's. -#}
{% macro _history_staging_only(staging) %}
  {%- set out = [] -%}
  {%- for c in adapter.get_columns_in_relation(staging) -%}
    {%- set n = c.name | lower -%}
    {%- if n == 'dbt_change_type' or n.startswith('dbt_unique_key') -%}
      {%- do out.append(n) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}
