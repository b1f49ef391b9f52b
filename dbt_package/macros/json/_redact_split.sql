{#- {'whole': [columns], 'inside': {column: [key paths]}} of a redact list. A column left out whole
    has no key paths: a list may name both (`payload`, read by a pii field, beside `payload.ssn`, a
    redaction), and a rewritten document put back would carry the pii key (decision 1155). -#}
{% macro _redact_split(redact) -%}
  {%- set whole, inside = [], {} -%}
  {%- for entry in redact | sort -%}
    {%- if entry.split('.') | length == 1 -%}{%- do whole.append(entry) -%}{%- endif -%}
  {%- endfor -%}
  {%- for entry in redact | sort -%}
    {%- set parts = entry.split('.') -%}
    {%- if parts | length > 1 and parts[0] not in whole -%}{%- do inside.setdefault(parts[0], []).append(parts[1:]) -%}{%- endif -%}
  {%- endfor -%}
  {{ return({'whole': whole, 'inside': inside}) }}
{%- endmacro %}
