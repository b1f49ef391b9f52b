{#- What the Python probe of `_sql_check_probe` counted: {<count query>: {'n', 'error'}}. -#}
{% macro _sql_check_outcomes() %}
  {%- set out = {} -%}
  {%- for row in run_query('select sql_text, n, error from temp.main.assay_sql_check_outcomes').rows -%}
    {%- do out.update({row[0]: {'n': (row[1] | int) if row[1] is not none else none, 'error': row[2]}}) -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}
