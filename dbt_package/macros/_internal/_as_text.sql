{% macro _as_text(expr) -%}
  CAST({{ expr }} AS {{ assay.sql_type('string') }})
{%- endmacro %}
