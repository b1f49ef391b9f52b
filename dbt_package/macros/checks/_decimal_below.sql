{#- Whether decimal text `a` is below decimal text `b`, exactly; none when either is no number. -#}
{% macro _decimal_below(a, b) %}
  {%- set x, y = assay._decimal_parts(a), assay._decimal_parts(b) -%}
  {%- if x is none or y is none -%}{{ return(none) }}{%- endif -%}
  {%- set e = [x['e'], y['e']] | min -%}
  {{ return(x['n'] * 10 ** (x['e'] - e) < y['n'] * 10 ** (y['e'] - e)) }}
{% endmacro %}
