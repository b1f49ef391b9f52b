{#
  True on an incremental run whose ledger (`relation`) carries the fingerprints; a
  ledger an earlier version of assay built has none, and is then read as before:
  every bronze load is searched for new rows (its new rows get fingerprints, the
  column being added by `on_schema_change`).
#}
{% macro ledger_fingerprinted(relation) -%}
  {%- if not (execute and assay.keyed_is_incremental()) -%}
    {{ return(false) }}
  {%- endif -%}
  {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
  {{ return('_bronze_fp' in have) }}
{%- endmacro %}
