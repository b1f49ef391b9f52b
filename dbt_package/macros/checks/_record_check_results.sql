{% macro _record_check_results(database, schema, table, results) %}
  {%- if results | length == 0 -%}{{ return(none) }}{%- endif -%}
  {%- set relation = assay._ensure_check_results(database, schema) -%}
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
       {{ assay.utc_now() }}){{ ',' if not loop.last }}
    {%- endfor %}
  {%- endcall %}
{% endmacro %}
