{#- The columns of dbt's snapshot staging rows that belong in the history: all but dbt's
    bookkeeping (dbt_change_type, dbt_unique_key*). -#}
{% macro _history_staging_columns(staging) %}
  {%- set out = [] -%}
  {%- for c in adapter.get_columns_in_relation(staging) -%}
    {%- set n = c.name | lower -%}
    {%- if not (n == 'dbt_change_type' or n.startswith('dbt_unique_key')) -%}
      {%- do out.append(c) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}
