{#- Keeps the rows a failing check found, read from the checked candidate, in
    <meta>.assay_check_rows for `assay check rows RUN CHECK` (decision 0532): at most
    `var('assay_check_rows_kept', 100)` rows per check, each as JSON text of the whole row, without
    the columns the entity redacts (the generated `assay_capture__<entity>` macro names them).

    `sql` returns the rows: a declared check's violating rows, or what a SQL check file returned. -#}
{% macro _capture_check_rows(candidate, audits_macro, results_schema, table, check_id, sql) %}
  {%- set limit = var('assay_check_rows_kept', 100) | int -%}
  {%- if limit <= 0 -%}{{ return(none) }}{%- endif -%}
  {%- set redact = [] -%}
  {%- if audits_macro -%}
    {%- set name = audits_macro | replace('assay_audits__', 'assay_capture__') -%}
    {%- set capture_of = context.get(name) or context.get('default__' ~ name) -%}
    {%- if capture_of is not none -%}{%- do redact.extend(capture_of()['redact']) -%}{%- endif -%}
  {%- endif -%}
  {%- set relation = assay._ensure_check_rows(candidate.database, results_schema) -%}
  {%- set rows_sql -%}
      select {{ assay.row_json('assay_r', redact) }} as assay_j
      from (select * from (
{{ sql }}
      ) as assay_q limit {{ limit }}) as assay_r
  {%- endset -%}
  {%- set keys = {'run_id': assay.string_literal(invocation_id), 'table_name': assay.string_literal(table),
                  'check_id': assay.string_literal(check_id)} -%}
  {%- do adapter.dispatch('_insert_check_rows', 'assay')(relation, keys, rows_sql) -%}
{% endmacro %}

{#- Inserts the rows of `rows_sql` (one text column, assay_j) numbered in their order. -#}
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
