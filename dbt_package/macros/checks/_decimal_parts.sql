{#- An exact decimal text (`-12.50`, `1e-05`) as {'n': integer, 'e': exponent}: n * 10^e; none
    for text that is not one. -#}
{% macro _decimal_parts(text) %}
  {%- set found = modules.re.match('^([+-]?)([0-9]*)(?:[.]([0-9]*))?(?:[eE]([+-]?[0-9]+))?$', (text | string) | trim) -%}
  {%- if found is none or not (found.group(2) ~ (found.group(3) or '')) -%}{{ return(none) }}{%- endif -%}
  {%- set fraction = found.group(3) or '' -%}
  {%- set n = ((found.group(2) ~ fraction) | int) * (-1 if found.group(1) == '-' else 1) -%}
  {{ return({'n': n, 'e': ((found.group(4) or '0') | int) - (fraction | length)}) }}
{% endmacro %}
