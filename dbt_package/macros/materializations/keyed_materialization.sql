{#
  The materialization of a keyed incremental table (the reject history, an incremental
  entity's ledger), decided by the adapter at parse time: dbt's own `incremental`
  (delete+insert) where the engine changes tables in place, assay_keyed on Spark, whose
  parquet tables take no DELETE and whose dbt adapter refuses delete+insert.
#}
{% macro keyed_materialization() -%}
  {{ return(adapter.dispatch('keyed_materialization', 'assay')()) }}
{%- endmacro %}

{% macro default__keyed_materialization() -%}
  {{ return('incremental') }}
{%- endmacro %}

{% macro spark__keyed_materialization() -%}
  {{ return('assay_keyed') }}
{%- endmacro %}
