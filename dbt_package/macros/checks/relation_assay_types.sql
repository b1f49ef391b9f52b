{#
  The assay type of every column of a relation assay does not build (a bronze source, a model
  of the user's own project), as {column name: type}, where the type is one of 'int',
  'decimal', 'timestamp', 'date', 'bool', 'string'. The declared checks of such a table have no
  declared types, so their one measuring query is chosen by these (decision 0522): a
  `value_range` measures an 'int' or 'decimal' column only, a `continuity` gap is measured in
  the domain of the type. A name is also listed in lower case, as Postgres folds an unquoted one.
  Floating-point columns read as 'decimal': they are ordered, but the engine compares them as
  floats.
#}
{% macro relation_assay_types(relation) %}
  {{ return(adapter.dispatch('relation_assay_types', 'assay')(relation)) }}
{% endmacro %}

{% macro default__relation_assay_types(relation) %}
  {#- Type names as DuckDB, PostgreSQL, Snowflake, BigQuery, Spark and Trino report them. -#}
  {%- set ints = ['tinyint', 'smallint', 'integer', 'int', 'bigint', 'hugeint', 'int1', 'int2', 'int4', 'int8', 'int64',
                  'byteint', 'utinyint', 'usmallint', 'uinteger', 'ubigint', 'uhugeint', 'serial', 'bigserial', 'smallserial'] -%}
  {%- set floats = ['double', 'double precision', 'real', 'float', 'float4', 'float8', 'float64'] -%}
  {%- set types = {} -%}
  {%- for column in adapter.get_columns_in_relation(relation) -%}
    {%- set t = (column.data_type or '') | lower | trim -%}
    {%- if t.startswith('timestamp') or t == 'datetime' -%}{%- set assay_type = 'timestamp' -%}
    {%- elif t == 'date' -%}{%- set assay_type = 'date' -%}
    {%- elif t.startswith('bool') -%}{%- set assay_type = 'bool' -%}
    {%- elif t in ints -%}{%- set assay_type = 'int' -%}
    {%- elif t.startswith('numeric') or t.startswith('decimal') or t.startswith('number') or t.startswith('bignumeric') or t in floats -%}{%- set assay_type = 'decimal' -%}
    {%- else -%}{%- set assay_type = 'string' -%}
    {%- endif -%}
    {%- do types.update({column.name: assay_type}) -%}
    {%- if (column.name | lower) not in types -%}{%- do types.update({column.name | lower: assay_type}) -%}{%- endif -%}
  {%- endfor -%}
  {{ return(types) }}
{% endmacro %}
