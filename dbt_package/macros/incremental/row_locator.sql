{#
  The name of the column that locates a stored row of a table within one query, or
  none where the engine has no such column that a join can use. An incremental build
  finds the few ledger rows a new delivery touches by their key columns alone and then
  fetches those rows whole by locator: DuckDB reads a `rowid` match without scanning the
  table's other columns, where a join on the key itself reads every column of every
  row it passes (decision 0953). PostgreSQL's `ctid` gives a join nothing (it is read
  by a sequential scan like any column) and Spark has none, so both read as before.
#}
{% macro row_locator() -%}
  {{ return(adapter.dispatch('row_locator', 'assay')()) }}
{%- endmacro %}

{% macro default__row_locator() -%}
  {{ return(none) }}
{%- endmacro %}

{% macro duckdb__row_locator() -%}
  {{ return('rowid') }}
{%- endmacro %}
