{#- A repeated key as the short sentence shows it: NULL for a missing part (never Python's None),
    other parts as the engine wrote them. `assay table get` and `assay checks` show 000's own
    rendering (assay.checks.detail.render_key) from the recorded result. -#}
{% macro _key_text(parts) %}
  {%- set shown = [] -%}
  {%- for p in parts -%}{%- do shown.append('NULL' if p is none else (p | string)) -%}{%- endfor -%}
  {{ return(shown | join(', ')) }}
{% endmacro %}
