{#- CSV seeds cannot carry an empty string (it loads as NULL) or reliably keep edge
    whitespace and control characters, so the input seeds spell them as markers. -#}
{% macro decode_markers(col) -%}
  CASE WHEN {{ col }} = '<empty>' THEN ''
  ELSE replace(replace(replace({{ col }}, '<sp>', ' '), '<tab>', chr(9)), '<nel>', chr(133)) END
{%- endmacro %}

{#- The inverse for outputs: '' shows as '<empty>' while NULL stays NULL. -#}
{% macro show_empty(expr) -%}
  CASE WHEN {{ expr }} = '' THEN '<empty>' ELSE {{ expr }} END
{%- endmacro %}

{#- Distinct values of a seed column, read when the model is compiled, so that the literal
    arguments (patterns, formats) live next to their cases in the CSV. -#}
{% macro seed_values(relation, columns, order_by='case_id') %}
  {%- if not execute -%}{{ return([]) }}{%- endif -%}
  {%- set rows = run_query('select ' ~ columns | join(', ') ~ ' from ' ~ relation ~ ' order by ' ~ order_by) -%}
  {{ return(rows.rows) }}
{% endmacro %}
