{% macro string_literal(value) -%}
  {{ return(adapter.dispatch('string_literal', 'assay')(value)) }}
{%- endmacro %}

{#- Standard SQL: only the quote is special (DuckDB, Postgres with
    standard_conforming_strings, the default since 9.1; Trino). -#}
{% macro default__string_literal(value) -%}
  {%- if value is none -%}{{ return('NULL') }}{%- endif -%}
  {{ return("'" ~ (value | string | replace("'", "''")) ~ "'") }}
{%- endmacro %}

{% macro snowflake__string_literal(value) -%}
  {{ return(assay._backslash_string_literal(value)) }}
{%- endmacro %}

{% macro bigquery__string_literal(value) -%}
  {{ return(assay._backslash_string_literal(value)) }}
{%- endmacro %}

{% macro spark__string_literal(value) -%}
  {{ return(assay._backslash_string_literal(value)) }}
{%- endmacro %}

{#- Redshift reads backslash escapes (its parser predates standard_conforming_strings). -#}
{% macro redshift__string_literal(value) -%}
  {{ return(assay._backslash_string_literal(value, "''")) }}
{%- endmacro %}
