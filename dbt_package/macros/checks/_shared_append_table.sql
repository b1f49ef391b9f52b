{#- Readies `relation`, a table that several nodes append to at once (check results, a failing
    check's rows, events), for those concurrent appends. Nothing to do where the engine's own
    transactions keep two INSERTs apart (DuckDB, PostgreSQL). -#}
{% macro _shared_append_table(relation) %}
  {%- do return(adapter.dispatch('_shared_append_table', 'assay')(relation)) -%}
{% endmacro %}

{% macro default___shared_append_table(relation) %}{% endmacro %}

{#- Spark on parquet (issue 18, decision 1080): every INSERT INTO goes through Hadoop's
    FileOutputCommitter at the table's directory, and all of them stage under its one
    `_temporary` directory, which the first job to commit deleted under the others ("Mkdirs
    failed to create .../_temporary/...", "chmod: cannot access .../_temporary/..."). A file
    table's options are the Hadoop settings of every write into it, so the table itself asks for:
    the committer's algorithm 2 (a task moves its files straight into the table when it commits
    and then removes its own attempt directory; the job commit moves nothing, so it never takes
    another job's files), no deletion of the shared `_temporary` at job commit, and no `_SUCCESS`
    marker (one more file every job would rewrite). An INSERT's files carry its own job's UUID,
    so two never collide. Set before every append (idempotent, one catalog update): the node
    that creates the table is the generated meta model, not the package. -#}
{% macro spark___shared_append_table(relation) %}
  {% call statement('assay_shared_append_table') -%}
    alter table {{ relation }} set serdeproperties (
      'mapreduce.fileoutputcommitter.algorithm.version' = '2',
      'mapreduce.fileoutputcommitter.cleanup.skipped' = 'true',
      'mapreduce.fileoutputcommitter.task.cleanup.enabled' = 'true',
      'mapreduce.fileoutputcommitter.marksuccessfuljobs' = 'false')
  {%- endcall %}
{% endmacro %}
