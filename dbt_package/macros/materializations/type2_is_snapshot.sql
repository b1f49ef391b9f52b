{#
  Whether a type-2 entity's history is dbt's own snapshot (true) or the assay_history model
  (false), decided at parse time: the generator writes both nodes and enables exactly one.
  dbt's snapshot changes the stored history in place (MERGE, or UPDATE + INSERT), which Spark's
  parquet tables cannot take and dbt-spark refuses on them; assay_history builds the next
  history beside the stored one and swaps it in there (decision 0807). Databricks (Delta) runs
  dbt's snapshot. The project variable `assay_type2_as_snapshot` overrides the adapter's answer
  (for example true on Spark when every table is Delta).
#}
{% macro type2_is_snapshot() -%}
  {{ return(var('assay_type2_as_snapshot', adapter.dispatch('type2_is_snapshot', 'assay')())) }}
{%- endmacro %}

{% macro default__type2_is_snapshot() -%}
  {{ return(true) }}
{%- endmacro %}

{% macro spark__type2_is_snapshot() -%}
  {{ return(false) }}
{%- endmacro %}

{% macro databricks__type2_is_snapshot() -%}
  {{ return(true) }}
{%- endmacro %}
