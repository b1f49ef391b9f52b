{#- The text a timestamp field is cast from. PostgreSQL rounds a fraction of a second of more
    than six digits (23:59:59.9999999 becomes the next day) where DuckDB and Spark cut it to
    microseconds: it is cut here too, so the same text is the same instant on every engine
    (decision 1167; parse_ts and _ingested_at cut it already, decision 0983). -#}
{% macro _timestamp_text(operand) -%}
  {{ return(adapter.dispatch('_timestamp_text', 'assay')(operand)) }}
{%- endmacro %}

{% macro default___timestamp_text(operand) -%}
  {{ return(operand) }}
{%- endmacro %}

{% macro postgres___timestamp_text(operand) -%}
  {{ return("regexp_replace(" ~ operand ~ ", '([.][0-9]{6})[0-9]+', '\\1')") }}
{%- endmacro %}
