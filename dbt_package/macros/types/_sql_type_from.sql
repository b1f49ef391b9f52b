{% macro _sql_type_from(assay_type, names, decimal_type='DECIMAL') %}
  {%- set t = assay._parse_type(assay_type) -%}
  {%- if t.kind == 'decimal' -%}
    {{ return(decimal_type ~ '(' ~ t.precision ~ ',' ~ t.scale ~ ')') }}
  {%- endif -%}
  {{ return(names[t.kind]) }}
{% endmacro %}
