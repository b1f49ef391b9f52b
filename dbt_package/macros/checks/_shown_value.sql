{#- A measured value (the engine's text) of assay type `assay_type` as the sentence shows it. -#}
{% macro _shown_value(check, text, assay_type, quote_numbers=true) %}
  {%- set hidden = (check.get('sentences') or {}).get('hidden') -%}
  {%- set quoted = none if text is none else "'" ~ (text | string | replace("'", "''")) ~ "'" -%}
  {%- if text is none -%}{{ return('NULL') }}
  {%- elif hidden is not none and text == hidden -%}{{ return(text) }}
  {%- elif assay_type == 'bool' and (text | lower) in ('true', 't', 'false', 'f') -%}
    {{ return('true' if (text | lower) in ('true', 't') else 'false') }}
  {%- elif assay_type == 'int' or assay_type.startswith('decimal') -%}
    {%- set number = assay._decimal_parts(text) if assay_type != 'int' or modules.re.match('^[+-]?[0-9]+$', text | trim) else none -%}
    {%- if number is none -%}{{ return(quoted) }}{%- endif -%}
    {%- set shown = assay._decimal_text(number) -%}
    {{ return(("'" ~ shown ~ "'") if quote_numbers else shown) }}
  {%- elif assay_type == 'timestamp' -%}
    {{ return(assay._timestamp_shown(text) or quoted) }}
  {%- else -%}
    {{ return(quoted) }}
  {%- endif -%}
{% endmacro %}
