{#
  The distance between two consecutive distinct values of a continuity check, exact on every
  engine (never a float): a timestamp gap in microseconds (the caller divides by 10^6), a date
  gap in seconds, a numeric gap in the column's own units.
#}
{% macro continuity_gap(lo, hi, domain) -%}
  {{ return(adapter.dispatch('continuity_gap', 'assay')(lo, hi, domain)) }}
{%- endmacro %}

{#- extract(epoch from interval) is numeric on Postgres 14+, so the product is exact. -#}
{% macro default__continuity_gap(lo, hi, domain) -%}
  {%- if domain == 'timestamp' -%}
    {{ return('cast(extract(epoch from (' ~ hi ~ ' - ' ~ lo ~ ')) * 1000000 as ' ~ assay.sql_type('int') ~ ')') }}
  {%- elif domain == 'date' -%}
    {{ return('cast((' ~ hi ~ ' - ' ~ lo ~ ') as ' ~ assay.sql_type('int') ~ ') * 86400') }}
  {%- endif -%}
  {{ return('(' ~ hi ~ ' - ' ~ lo ~ ')') }}
{%- endmacro %}

{#- DuckDB's epoch() is a double; epoch_us() is an exact BIGINT. -#}
{% macro duckdb__continuity_gap(lo, hi, domain) -%}
  {%- if domain == 'timestamp' -%}
    {{ return('(epoch_us(' ~ hi ~ ') - epoch_us(' ~ lo ~ '))') }}
  {%- endif -%}
  {{ return(assay.default__continuity_gap(lo, hi, domain)) }}
{%- endmacro %}

{#- Spark: a timestamp difference is an interval with no epoch field; unix_micros is an exact
    BIGINT. A date difference is an interval too: datediff counts the days. -#}
{% macro spark__continuity_gap(lo, hi, domain) -%}
  {%- if domain == 'timestamp' -%}
    {{ return('(unix_micros(' ~ hi ~ ') - unix_micros(' ~ lo ~ '))') }}
  {%- elif domain == 'date' -%}
    {{ return('cast(datediff(' ~ hi ~ ', ' ~ lo ~ ') as ' ~ assay.sql_type('int') ~ ') * 86400') }}
  {%- endif -%}
  {{ return(assay.default__continuity_gap(lo, hi, domain)) }}
{%- endmacro %}
