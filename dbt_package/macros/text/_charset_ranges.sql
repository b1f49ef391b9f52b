{#- [lo, hi] pairs -> clean ranges: clipped to Unicode scalar values, surrogates cut out (no
    engine accepts them in a class and no valid text contains them), NUL dropped where
    `min_cp` says the engine cannot name it. -#}
{% macro _charset_ranges(ranges, min_cp=0) %}
  {%- set out = [] -%}
  {%- for r in ranges -%}
    {%- set lo = [r[0] | int, min_cp] | max -%}
    {%- set hi = [r[1] | int, 1114111] | min -%}
    {%- for piece in [[lo, [hi, 55295] | min], [[lo, 57344] | max, hi]] -%}
      {%- if piece[0] <= piece[1] -%}{%- do out.append(piece) -%}{%- endif -%}
    {%- endfor -%}
  {%- endfor -%}
  {{ return(out) }}
{% endmacro %}
