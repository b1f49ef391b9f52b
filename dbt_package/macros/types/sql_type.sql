{% macro sql_type(assay_type) -%}
  {{ return(adapter.dispatch('sql_type', 'assay')(assay_type)) }}
{%- endmacro %}

{% macro default__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'VARCHAR', 'int': 'BIGINT', 'bool': 'BOOLEAN',
      'date': 'DATE', 'timestamp': 'TIMESTAMP', 'variant': 'VARCHAR'})) }}
{%- endmacro %}

{% macro duckdb__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'VARCHAR', 'int': 'BIGINT', 'bool': 'BOOLEAN',
      'date': 'DATE', 'timestamp': 'TIMESTAMP', 'variant': 'JSON'})) }}
{%- endmacro %}

{#- jsonb, not json: json has no equality operator, so DISTINCT/EXCEPT/GROUP BY would fail. -#}
{% macro postgres__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'text', 'int': 'bigint', 'bool': 'boolean',
      'date': 'date', 'timestamp': 'timestamp', 'variant': 'jsonb'}, 'numeric')) }}
{%- endmacro %}

{#- A bare VARCHAR is VARCHAR(256) on Redshift and would truncate. -#}
{% macro redshift__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'VARCHAR(65535)', 'int': 'BIGINT', 'bool': 'BOOLEAN',
      'date': 'DATE', 'timestamp': 'TIMESTAMP', 'variant': 'SUPER'})) }}
{%- endmacro %}

{% macro snowflake__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'VARCHAR', 'int': 'NUMBER(19,0)', 'bool': 'BOOLEAN',
      'date': 'DATE', 'timestamp': 'TIMESTAMP_NTZ', 'variant': 'VARIANT'}, 'NUMBER')) }}
{%- endmacro %}

{#- DATETIME is BigQuery's zoneless type; variant stays STRING because JSON cannot be grouped
    or compared. NUMERIC holds at most 29 integer and 9 fraction digits. -#}
{% macro bigquery__sql_type(assay_type) -%}
  {%- set t = assay._parse_type(assay_type) -%}
  {%- set numeric = 'NUMERIC' if (t.kind == 'decimal' and t.scale <= 9 and t.precision - t.scale <= 29) else 'BIGNUMERIC' -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'STRING', 'int': 'INT64', 'bool': 'BOOL',
      'date': 'DATE', 'timestamp': 'DATETIME', 'variant': 'STRING'}, numeric)) }}
{%- endmacro %}

{% macro spark__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'STRING', 'int': 'BIGINT', 'bool': 'BOOLEAN',
      'date': 'DATE', 'timestamp': 'TIMESTAMP', 'variant': 'STRING'})) }}
{%- endmacro %}

{#- Trino's bare timestamp is millisecond precision; the other engines keep microseconds. -#}
{% macro trino__sql_type(assay_type) -%}
  {{ return(assay._sql_type_from(assay_type, {'string': 'varchar', 'int': 'bigint', 'bool': 'boolean',
      'date': 'date', 'timestamp': 'timestamp(6)', 'variant': 'json'}, 'decimal')) }}
{%- endmacro %}
