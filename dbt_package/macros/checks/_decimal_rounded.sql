{#- An exact number {'n', 'e'} (assay._decimal_parts) rounded to `places` fraction digits:
    `ceiling`, `floor` or `half_even`, as Python's Decimal.quantize rounds (integers only, never a
    float). Returns {'n', 'e'} with e = -places. -#}
{% macro _decimal_rounded(number, places, mode) %}
  {%- set shift = number['e'] + places -%}
  {%- if shift >= 0 -%}
    {{ return({'n': number['n'] * 10 ** shift, 'e': 0 - places}) }}
  {%- endif -%}
  {%- set unit = 10 ** (0 - shift) -%}
  {%- set down = number['n'] // unit -%}
  {%- set rest = number['n'] - down * unit -%}
  {%- if mode == 'floor' or rest == 0 -%}
    {%- set q = down -%}
  {%- elif mode == 'ceiling' -%}
    {%- set q = down + 1 -%}
  {%- elif rest * 2 > unit or (rest * 2 == unit and down % 2 == 1) -%}
    {%- set q = down + 1 -%}
  {%- else -%}
    {%- set q = down -%}
  {%- endif -%}
  {{ return({'n': q, 'e': 0 - places}) }}
{% endmacro %}
