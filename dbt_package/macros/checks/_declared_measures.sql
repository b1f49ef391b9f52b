{#- The numbers one declared check reads from the row of the measuring query: `measures` holds
    the counts (as integers) and the values cast to text that are recorded beside the verdict,
    `gap` the continuity gap in the engine's own exact type (none when the check has none).
    `check` is the generator's descriptor: `counts` and `texts` name the row's columns. -#}
{% macro _declared_measures(check, row) %}
  {%- set m = {} -%}
  {%- for key, column in check['counts'].items() -%}
    {%- do m.update({key: (row[column] | int) if row[column] is not none else none}) -%}
  {%- endfor -%}
  {%- for key, column in check['texts'].items() -%}
    {%- if column is string -%}
      {%- do m.update({key: row[column]}) -%}
    {%- else -%}
      {%- set parts = [] -%}
      {%- for c in column -%}{%- do parts.append(row[c]) -%}{%- endfor -%}
      {%- do m.update({key: parts}) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set gap = row[check['gap']] if check.get('gap') else none -%}
  {{ return({'measures': m, 'gap': gap}) }}
{% endmacro %}
