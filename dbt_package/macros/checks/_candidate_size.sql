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

{#- PostgreSQL: a sequential scan of a relation with storage of its own (pg_class.relkind 'r' a
    table, 'm' a materialized view) reads its heap and TOAST heap, nothing else (no index, no
    free-space or visibility map), so the estimate is their size on disk. Any other kind has no
    heap to measure (pg_relation_size reads 0): a view ('v', an incremental entity's candidate,
    decision 1090), a partitioned table ('p', its rows live in its partitions), a foreign table
    ('f'). Its estimate is its rows times what each would occupy in a heap: the planner's row
    width for `select *` (EXPLAIN, from the statistics of the tables underneath; nothing runs)
    plus the 24-byte tuple header and 4-byte line pointer a heap row carries, so the same rows
    measure about what they would as a table candidate (decision 0530). The rows of an entity's
    table candidate are the count its CREATE TABLE AS (the statement 'main') reported, no scan;
    any other relation (a view candidate, a table assay only reads) is counted. -#}
{% macro postgres___candidate_size(relation) %}
  {%- set main = load_result('main') if relation.identifier.endswith('__assay_candidate') else none -%}
  {%- set rows = main['response'].rows_affected if main and main['response'] is not none else none -%}
  {%- set counted = rows is none or rows < 0 -%}
  {%- set sql -%}
    select c.relkind::text as assay_kind,
      pg_relation_size(c.oid) + coalesce(pg_relation_size(nullif(c.reltoastrelid, 0)), 0) as assay_bytes
    {%- if counted %}, (select count(*) from {{ relation }}) as assay_rows{% endif %}
    from pg_class as c where c.oid = {{ assay.string_literal(relation | string) }}::regclass
  {%- endset -%}
  {%- set row = run_query(sql).rows[0] -%}
  {%- set rows = (row[2] | int) if counted else rows -%}
  {%- if row[0] in ('r', 'm') -%}
    {{ return({'rows': rows, 'bytes': row[1] | int}) }}
  {%- endif -%}
  {#- dbt hands a json value over as its text -#}
  {%- set plan = run_query('explain (format json) select * from ' ~ relation).rows[0][0] -%}
  {%- set plan = fromjson(plan) if plan is string else plan -%}
  {{ return({'rows': rows, 'bytes': rows * ((plan[0]['Plan']['Plan Width'] | int) + 28)}) }}
{% endmacro %}

{#- Spark: a count (answered from parquet footers); the bytes of a scan are not estimated here
    (table statistics exist only after ANALYZE TABLE), so a byte budget does not limit the pass. -#}
{% macro spark___candidate_size(relation) %}
  {%- set row = run_query('select count(*) as assay_rows from ' ~ relation).rows[0] -%}
  {{ return({'rows': row[0] | int, 'bytes': none}) }}
{% endmacro %}
