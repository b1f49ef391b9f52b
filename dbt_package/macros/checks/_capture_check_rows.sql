{#- Keeps the rows a failing check found, read from the checked candidate, in
    <meta>.assay_check_rows for `assay check rows RUN CHECK` (decision 0532): at most
    `var('assay_check_rows_kept', 100)` rows per check, each as JSON text of the whole row, without
    the columns the entity redacts (the generated `assay_capture__<entity>` macro names them).

    `sql` returns the rows: a declared check's violating rows, or what a SQL check file returned;
    `also_redact`: the output columns of a SQL check file that may carry a pii value (traced by
    the generator through aliases and expressions, decision 0913). -#}
{% macro _capture_check_rows(candidate, audits_macro, results_schema, table, check_id, sql, also_redact=[]) %}
  {%- set limit = var('assay_check_rows_kept', 100) | int -%}
  {%- if limit <= 0 -%}{{ return(none) }}{%- endif -%}
  {%- set redact = [] -%}
  {%- if audits_macro -%}
    {%- set name = audits_macro | replace('assay_audits__', 'assay_capture__') -%}
    {%- set capture_of = context.get(name) or context.get('default__' ~ name) -%}
    {%- if capture_of is not none -%}{%- do redact.extend(capture_of()['redact']) -%}{%- endif -%}
  {%- endif -%}
  {%- for c in also_redact -%}{%- if c not in redact -%}{%- do redact.append(c) -%}{%- endif -%}{%- endfor -%}
  {%- set relation = assay._ensure_check_rows(candidate.database, results_schema) -%}
  {%- set rows_sql -%}
      select {{ assay.row_json('assay_r', redact) }} as assay_j
      from (select * from (
{{ sql }}
      ) as assay_q limit {{ limit }}) as assay_r
  {%- endset -%}
  {%- set keys = {'run_id': assay.string_literal(invocation_id), 'table_name': assay.string_literal(table),
                  'check_id': assay.string_literal(check_id)} -%}
  {%- do assay._insert_check_rows(relation, keys, rows_sql) -%}
{% endmacro %}
