{#- {'n', 'e'} as an exact number's text: never an exponent, no trailing zeros, `0` for zero. -#}
{% macro _decimal_text(number) %}
  {%- set digits = (number['n'] | abs) ~ '' -%}
  {%- if number['e'] >= 0 -%}
    {%- set whole, fraction = digits ~ ('0' * number['e']), '' -%}
  {%- else -%}
    {%- set point = (digits | length) + number['e'] -%}
    {%- set whole = digits[:point] if point > 0 else '0' -%}
    {%- set fraction = ('0' * ([0 - point, 0] | max)) ~ digits[([point, 0] | max):] -%}
  {%- endif -%}
  {%- set fraction = fraction.rstrip('0') -%}
  {%- set shown = (whole.lstrip('0') or '0') ~ ('.' ~ fraction if fraction else '') -%}
  {{ return(('-' ~ shown) if number['n'] < 0 and shown != '0' else shown) }}
{% endmacro %}
