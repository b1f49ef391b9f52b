{#- The reject resolution statement the generator wrote beside an entity's audits, or none. -#}
{% macro _entity_resolution_sql(audits_macro) %}
  {%- if not audits_macro -%}{{ return(none) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_resolve__') -%}
  {%- set resolve = context.get(name) or context.get('default__' ~ name) -%}
  {{ return(resolve() if resolve is not none else none) }}
{% endmacro %}
