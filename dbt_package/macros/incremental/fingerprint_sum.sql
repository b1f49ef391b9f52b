{#
  The sum of a load's fingerprints, exact on every engine: DuckDB sums its unsigned
  64-bit hashes into a 128-bit integer and PostgreSQL bigints into numeric, while
  Spark's sum of bigints would overflow (or fail under ANSI mode).
#}
{% macro fingerprint_sum(expr) -%}
  {{ return(adapter.dispatch('fingerprint_sum', 'assay')(expr)) }}
{%- endmacro %}

{% macro default__fingerprint_sum(expr) -%}
  sum({{ expr }})
{%- endmacro %}

{% macro spark__fingerprint_sum(expr) -%}
  sum(cast({{ expr }} as decimal(38, 0)))
{%- endmacro %}
