{#- {'whole': [columns], 'inside': {column: [key paths]}} of a redact list. -#}
{% macro _redact_split(redact) -%}
  {%- set whole, inside = [], {} -%}
  {%- for entry in redact | sort -%}
    {%- set parts = entry.split('.') -%}
    {%- if parts | length == 1 -%}{%- do whole.append(entry) -%}
    {%- else -%}{%- do inside.setdefault(parts[0], []).append(parts[1:]) -%}{%- endif -%}
  {%- endfor -%}
  {{ return({'whole': whole, 'inside': inside}) }}
{%- endmacro %}
