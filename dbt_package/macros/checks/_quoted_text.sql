{#- A name in single quotes, a quote inside doubled (assay.checks.detail._quote). -#}
{% macro _quoted_text(text) %}
  {{ return("'" ~ ((text ~ '') | replace("'", "''")) ~ "'") }}
{% endmacro %}
