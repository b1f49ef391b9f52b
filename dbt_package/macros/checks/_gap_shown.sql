{#- The widest gap of a continuity check as the sentence shows it: a temporal gap recorded in
    1/`scale` seconds, a numeric one in the column's units, exact. -#}
{% macro _gap_shown(text, domain, scale) %}
  {%- set number = assay._decimal_parts(text) -%}
  {%- if number is none -%}{{ return(text) }}{%- endif -%}
  {%- if domain == 'numeric' -%}{{ return(assay._decimal_text(number)) }}{%- endif -%}
  {#- a count of 1/scale seconds (a power of ten), as an exact number of seconds -#}
  {%- set units = (number['n'] * 10 ** number['e']) | int if number['e'] >= 0 else (number['n'] // 10 ** (0 - number['e'])) -%}
  {{ return(assay._decimal_text({'n': units, 'e': 0 - ((scale | string) | length) + 1})) }}
{% endmacro %}
