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
  {%- set row_json = assay.row_json('assay_r', redact) -%}
  {% call statement('assay_capture_check_rows') -%}
    insert into {{ relation }} (run_id, table_name, check_id, row_number, row_json)
    select {{ assay.string_literal(invocation_id) }}, {{ assay.string_literal(table) }}, {{ assay.string_literal(check_id) }},
           row_number() over (order by assay_j), assay_j
    from (
      select {{ row_json }} as assay_j
      from (select * from (
{{ sql }}
      ) as assay_q limit {{ limit }}) as assay_r
    ) as assay_s
  {%- endcall %}
{% endmacro %}
