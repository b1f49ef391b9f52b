{#- Text as a sort key compared byte by byte (decision 0984): the dedupe and delivery orders read
    text columns (`_load_id`, `_source_row_id`, a text tie_break), and the winner must be a function
    of the data, not of the database's collation. DuckDB and Spark compare text by its bytes
    already; PostgreSQL uses the database's collation (`en-US` puts 'a' before 'B'), so it is told
    to compare as "C", which is byte order (and code point order, for UTF-8). -#}
{% macro byte_order(expr) -%}
  {{ return(adapter.dispatch('byte_order', 'assay')(expr)) }}
{%- endmacro %}

{% macro default__byte_order(expr) -%}
  {{ return(expr) }}
{%- endmacro %}

{% macro postgres__byte_order(expr) -%}
  {{ return('(' ~ expr ~ ') collate "C"') }}
{%- endmacro %}

{#- Redshift inherits postgres__ macros and has no "C" collation to name. -#}
{% macro redshift__byte_order(expr) -%}
  {{ return(expr) }}
{%- endmacro %}
