{#- Inserts the rows of `rows_sql` (one text column, assay_j) numbered in their order. -#}
{% macro _insert_check_rows(relation, keys, rows_sql) %}
  {%- do return(adapter.dispatch('_insert_check_rows', 'assay')(relation, keys, rows_sql)) -%}
{% endmacro %}

{% macro default___insert_check_rows(relation, keys, rows_sql) %}
  {% call statement('assay_capture_check_rows') -%}
    insert into {{ relation }} (run_id, table_name, check_id, row_number, row_json)
    select {{ keys['run_id'] }}, {{ keys['table_name'] }}, {{ keys['check_id'] }},
           row_number() over (order by assay_j), assay_j
    from (
{{ rows_sql }}
    ) as assay_s
  {%- endcall %}
{% endmacro %}

{#- PostgreSQL: the check runs again to keep its rows, and like its count (_try_count) it runs
    read-only (issue 21, `_read_only_into`): the rows are read into a PL/pgSQL array, and the
    insert follows outside the read-only block. -#}
{% macro postgres___insert_check_rows(relation, keys, rows_sql) %}
  {%- set tag = assay._free_dollar_tag(rows_sql) -%}
  {%- set read = 'select array_agg(assay_j order by assay_j) from (' ~ rows_sql ~ '\n) as assay_s' -%}
  {% call statement('assay_capture_check_rows') -%}
    do ${{ tag }}$
    declare assay_rows text[];
    begin
      {{ assay._read_only_into(read, 'assay_rows') }}
      insert into {{ relation }} (run_id, table_name, check_id, row_number, row_json)
      select {{ keys['run_id'] }}, {{ keys['table_name'] }}, {{ keys['check_id'] }}, assay_n, assay_j
      from unnest(assay_rows) with ordinality as assay_u(assay_j, assay_n);
    end
    ${{ tag }}$;
  {%- endcall %}
{% endmacro %}
