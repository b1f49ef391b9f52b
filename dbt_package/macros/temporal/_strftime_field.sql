{#- One captured field, zero-padded for the ISO text; absent time fields are midnight. -#}
{% macro _strftime_field(s, re, groups, field, pad=2) -%}
  {%- if field in groups -%}
    LPAD({{ assay.regex_extract(s, re, groups[field]) }}, {{ pad }}, '0')
  {%- else -%}
    '00'
  {%- endif -%}
{%- endmacro %}
