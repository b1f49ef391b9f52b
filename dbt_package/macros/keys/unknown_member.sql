{% macro unknown_member(fk_expr, probe_expr) -%}
  {{ return(adapter.dispatch('unknown_member', 'assay')(fk_expr, probe_expr)) }}
{%- endmacro %}

{#- Not COALESCE: a NULL foreign key claims no relationship, so it must stay NULL rather
    than be routed to the reserved member. -#}
{% macro default__unknown_member(fk_expr, probe_expr) -%}
  CASE WHEN {{ probe_expr }} IS NULL AND {{ fk_expr }} IS NOT NULL THEN '__unknown__' ELSE {{ fk_expr }} END
{%- endmacro %}
