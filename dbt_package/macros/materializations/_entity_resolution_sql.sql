{#- The reject resolution statement the generator wrote beside an entity's audits, or none.
    `since`: the newest `_processed_at` the entity had published before this build, when this
    build publishes only the ledger's changes (assay._entity_changes); an incremental entity's
    resolution then reads only the ledger rows written after it (lower/rejects.py,
    resolution_bound). -#}
{% macro _entity_resolution_sql(audits_macro, since=none) %}
  {%- if not audits_macro -%}{{ return(none) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_resolve__') -%}
  {%- set resolve = context.get(name) or context.get('default__' ~ name) -%}
  {%- if resolve is none -%}{{ return(none) }}{%- endif -%}
  {{ return(resolve(since)) }}
{% endmacro %}
