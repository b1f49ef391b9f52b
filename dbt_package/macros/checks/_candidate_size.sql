{#- What the row-reading pass of a table's declared checks would scan, read from the engine's
    metadata before the pass runs (decision 0530): {'rows': the candidate's row count, 'bytes':
    the estimated scan, none where the engine cannot estimate it}. `row_expectation` reads
    `rows`, so it evaluates even when the pass does not. -#}
{% macro _candidate_size(relation) %}
  {{ return(adapter.dispatch('_candidate_size', 'assay')(relation)) }}
{% endmacro %}

{#- DuckDB: the candidate is not committed yet, so duckdb_tables().estimated_size reads 0 and the
    storage info is empty. An unfiltered count(*) is answered from row-group counts; the bytes are
    rows times the width DuckDB keeps per row in its vectors (text, blobs and nested values count
    their 16-byte inline header, so long text is underestimated). -#}
{% macro default___candidate_size(relation) %}
  {%- set sql -%}
    select
      (select count(*) from {{ relation }}) as assay_rows,
      coalesce(sum(case
        when data_type in ('BOOLEAN', 'TINYINT', 'UTINYINT') then 1
        when data_type in ('SMALLINT', 'USMALLINT') then 2
        when data_type in ('INTEGER', 'UINTEGER', 'FLOAT', 'DATE') then 4
        when data_type like 'DECIMAL%' then case when numeric_precision <= 4 then 2 when numeric_precision <= 9 then 4
                                                 when numeric_precision <= 18 then 8 else 16 end
        when data_type in ('BIGINT', 'UBIGINT', 'DOUBLE', 'TIME') or data_type like 'TIMESTAMP%' then 8
        else 16 end), 0) as assay_width
    from duckdb_columns()
    where database_name = {{ assay.string_literal(relation.database) }}
      and schema_name = {{ assay.string_literal(relation.schema) }}
      and table_name = {{ assay.string_literal(relation.identifier) }}
  {%- endset -%}
  {%- set row = run_query(sql).rows[0] -%}
  {{ return({'rows': row[0] | int, 'bytes': (row[0] | int) * (row[1] | int)}) }}
{% endmacro %}

{#- PostgreSQL: a sequential scan reads the heap and its TOAST heap, nothing else (no index, no
    free-space or visibility map), so the estimate is their size on disk (a view measures 0). The rows of an entity's
    candidate are the count its CREATE TABLE AS (the statement 'main') reported, no scan; any
    other relation (a table assay only reads) is counted. -#}
{% macro postgres___candidate_size(relation) %}
  {%- set main = load_result('main') if relation.identifier.endswith('__assay_candidate') else none -%}
  {%- set rows = main['response'].rows_affected if main and main['response'] is not none else none -%}
  {%- set sql -%}
    select pg_relation_size(c.oid) + coalesce(pg_relation_size(nullif(c.reltoastrelid, 0)), 0) as assay_bytes
    {%- if rows is none or rows < 0 %}, (select count(*) from {{ relation }}) as assay_rows{% endif %}
    from pg_class as c where c.oid = {{ assay.string_literal(relation | string) }}::regclass
  {%- endset -%}
  {%- set row = run_query(sql).rows[0] -%}
  {{ return({'rows': (row[1] | int) if (rows is none or rows < 0) else rows, 'bytes': row[0] | int}) }}
{% endmacro %}

{#- Spark: a count (answered from parquet footers); the bytes of a scan are not estimated here
    (table statistics exist only after ANALYZE TABLE), so a byte budget does not limit the pass. -#}
{% macro spark___candidate_size(relation) %}
  {%- set row = run_query('select count(*) as assay_rows from ' ~ relation).rows[0] -%}
  {{ return({'rows': row[0] | int, 'bytes': none}) }}
{% endmacro %}
