{#
  Declared table checks (document 000) of an entity, evaluated on its candidate.

  The generator writes `default__assay_declared__<entity>(candidate)` beside the entity's
  audits; it returns the one measuring query of the table and a descriptor per check naming
  the columns of that query's single row the check reads. This macro runs the query once,
  decides every check from the measured numbers, records every result (passing and failing)
  in <meta>.assay_check_results, and returns one `CHECK_ID: detail` sentence per failed
  required check. The sentences here are short; `assay checks RUN_ID` renders 000's exact
  ones from the recorded numbers.
#}
{% macro run_declared_checks(candidate, audits_macro) %}
  {%- set failures = [] -%}
  {%- if not audits_macro -%}{{ return(failures) }}{%- endif -%}
  {%- set name = audits_macro | replace('assay_audits__', 'assay_declared__') -%}
  {%- set declared_of = context.get(name) or context.get('default__' ~ name) -%}
  {%- if declared_of is none -%}{{ return(failures) }}{%- endif -%}
  {%- set declared = declared_of(candidate) -%}
  {%- set row = run_query(declared['sql']).rows[0] -%}
  {%- set results = [] -%}
  {%- for check in declared['checks'] -%}
    {%- set m = {} -%}
    {%- for key, column in check['counts'].items() -%}
      {%- do m.update({key: (row[column] | int) if row[column] is not none else none}) -%}
    {%- endfor -%}
    {%- for key, column in check['texts'].items() -%}
      {%- if column is string -%}
        {%- do m.update({key: row[column]}) -%}
      {%- else -%}
        {%- set parts = [] -%}
        {%- for c in column -%}{%- do parts.append(row[c]) -%}{%- endfor -%}
        {%- do m.update({key: parts}) -%}
      {%- endif -%}
    {%- endfor -%}
    {%- set gap = row[check['gap']] if check.get('gap') else none -%}
    {%- set verdict = assay._declared_verdict(check, m, gap) -%}
    {%- do results.append({'check': check, 'measures': m, 'passed': verdict['passed']}) -%}
    {%- if check['blocking'] and not verdict['passed'] -%}
      {%- do failures.append(check['check_id'] ~ ': ' ~ verdict['detail']) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do assay.record_check_results(candidate.database, declared['results_schema'], declared['table'], results) -%}
  {{ return(failures) }}
{% endmacro %}


{#- Pass/fail of one check from its measured numbers, with a short sentence for the dbt error.
    Integers only (counts, microseconds), or the engine's own exact decimals: never a float. -#}
{% macro _declared_verdict(check, m, gap) %}
  {%- set b = check['bounds'] -%}
  {%- set kind = check['kind'] -%}
  {%- set col = "'" ~ check['columns'][0] ~ "'" if check['columns'] else '' -%}
  {%- set rows = m['rows'] -%}
  {%- if kind == 'row_expectation' -%}
    {%- set ok = (b.get('min_rows') is none or rows >= b['min_rows']) and (b.get('max_rows') is none or rows <= b['max_rows']) -%}
    {%- set detail = 'row count ' ~ rows ~ (' is within' if ok else ' is outside') ~ ' the declared bounds ['
        ~ b.get('min_rows', '') ~ ', ' ~ b.get('max_rows', '') ~ ']' -%}
  {%- elif kind == 'null_ceiling' -%}
    {%- set ok = rows == 0 or m['nulls'] * 1000000 <= b['max_null_ppm'] * rows -%}
    {%- set detail = 'column ' ~ col ~ ' is null on ' ~ m['nulls'] ~ ' of ' ~ rows ~ ' rows, '
        ~ ('at or below' if ok else 'above') ~ ' the declared ceiling of ' ~ b['max_null_ppm'] ~ ' ppm' -%}
  {%- elif kind == 'value_range' -%}
    {%- set range = '[' ~ b['min_value'] ~ ', ' ~ b['max_value'] ~ ']' -%}
    {%- if not check['orderable'] -%}
      {%- set ok = false -%}
      {%- set detail = 'column ' ~ col ~ ' holds values whose type is not orderable against the declared range ' ~ range -%}
    {%- else -%}
      {%- set ok = m['outside'] == 0 -%}
      {%- set detail = ('column ' ~ col ~ ' lies within ' ~ range) if ok else ('column ' ~ col ~ " holds '"
          ~ m['first'] ~ "', outside the declared range " ~ range ~ ' (' ~ m['outside'] ~ ' values outside)') -%}
    {%- endif -%}
  {%- elif kind == 'key_uniqueness' -%}
    {%- set ok = m['repeats'] == 0 -%}
    {%- set key = '(' ~ check['columns'] | join(', ') ~ ')' -%}
    {%- set detail = ('key ' ~ key ~ ' is distinct across all ' ~ rows ~ ' rows') if ok else ('key ' ~ key ~ ' repeats on '
        ~ m['repeats'] ~ ' of ' ~ rows ~ ' rows, first at (' ~ (m['key'] | map('string') | join(', ')) ~ ')') -%}
  {%- elif kind == 'continuity' -%}
    {%- set ceiling = b['max_gap_seconds'] -%}
    {%- if check['domain'] is none -%}
      {%- set ok = false -%}
      {%- set detail = 'column ' ~ col ~ ' holds values with no distance between them (not a timestamp, date or number)' -%}
    {%- elif m['distinct'] <= 1 or gap is none -%}
      {%- set ok = true -%}
      {%- set detail = 'column ' ~ col ~ ' has ' ~ m['distinct'] ~ ' distinct values, so no gap' -%}
    {%- else -%}
      {%- set ok = gap <= ceiling * check['gap_scale'] -%}
      {%- set unit = ' microseconds' if check['domain'] == 'timestamp' else (' seconds' if check['domain'] == 'date' else '') -%}
      {%- set detail = 'column ' ~ col ~ ' gaps from ' ~ m['from'] ~ ' to ' ~ m['to'] ~ ' by ' ~ m['gap'] ~ unit ~ ', '
          ~ ('at or below' if ok else 'above') ~ ' the declared ceiling of ' ~ ceiling ~ ' seconds' -%}
    {%- endif -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error('assay: unknown declared check kind ' ~ kind ~ '; run `assay generate dbt` again.') }}
  {%- endif -%}
  {{ return({'passed': ok, 'detail': detail}) }}
{% endmacro %}


{% macro check_results_relation(database, schema) %}
  {{ return(api.Relation.create(database=database, schema=schema, identifier='assay_check_results', type='table')) }}
{% endmacro %}


{#- One row per run, table and check. The check's own definition (columns, their types,
    bounds) is recorded beside the measurements, so a result reads the same after the spec
    changes. -#}
{% macro check_results_select() %}
  select
    cast(null as {{ assay.sql_type('string') }}) as run_id,
    cast(null as {{ assay.sql_type('string') }}) as table_name,
    cast(null as {{ assay.sql_type('string') }}) as check_id,
    cast(null as {{ assay.sql_type('int') }}) as check_position,
    cast(null as {{ assay.sql_type('string') }}) as kind,
    cast(null as {{ assay.sql_type('string') }}) as enforcement,
    cast(null as {{ assay.sql_type('bool') }}) as passed,
    cast(null as {{ assay.sql_type('int') }}) as row_count,
    cast(null as {{ assay.sql_type('string') }}) as check_spec,
    cast(null as {{ assay.sql_type('string') }}) as measures,
    cast(null as {{ assay.sql_type('timestamp') }}) as recorded_at
  where 1 = 0
{% endmacro %}


{#- The generated `assay_check_results` model creates the table before any entity that records
    into it (parallel entities would otherwise race to create it). This covers a node run on its
    own (`dbt build --select`) before that model ever ran. -#}
{% macro ensure_check_results(database, schema) %}
  {%- set relation = assay.check_results_relation(database, schema) -%}
  {%- if adapter.get_relation(database=database, schema=schema, identifier='assay_check_results') is none -%}
    {% do adapter.create_schema(relation) %}
    {% call statement('assay_create_check_results') -%}
      create table if not exists {{ relation }} as {{ assay.check_results_select() }}
    {%- endcall %}
  {%- endif -%}
  {{ return(relation) }}
{% endmacro %}


{% macro record_check_results(database, schema, table, results) %}
  {%- if results | length == 0 -%}{{ return(none) }}{%- endif -%}
  {%- set relation = assay.ensure_check_results(database, schema) -%}
  {% call statement('assay_record_check_results') -%}
    insert into {{ relation }} (run_id, table_name, check_id, check_position, kind, enforcement, passed, row_count, check_spec, measures, recorded_at)
    values
    {%- for r in results %}
      {%- set c = r['check'] -%}
      {%- set spec = {'columns': c['columns'], 'types': c['types'], 'bounds': c['bounds'],
                      'domain': c.get('domain'), 'gap_scale': c.get('gap_scale'), 'orderable': c.get('orderable')} %}
      ({{ assay.string_literal(invocation_id) }}, {{ assay.string_literal(table) }}, {{ assay.string_literal(c['check_id']) }},
       {{ c['position'] }}, {{ assay.string_literal(c['kind']) }}, {{ assay.string_literal(c['enforcement']) }},
       {{ 'true' if r['passed'] else 'false' }}, {{ r['measures']['rows'] }},
       {{ assay.string_literal(tojson(spec, sort_keys=true)) }}, {{ assay.string_literal(tojson(r['measures'], sort_keys=true)) }},
       cast(current_timestamp as {{ assay.sql_type('timestamp') }})){{ ',' if not loop.last }}
    {%- endfor %}
  {%- endcall %}
{% endmacro %}
