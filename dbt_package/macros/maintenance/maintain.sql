{#- `dbt run-operation assay.maintain --args '{dry_run: true}'`: retention, what `assay maintain` does.

    Every model the generator marked with `meta: {assay_entity, retention}` (the reject models)
    loses the rows older than its retention: unresolved rows measured from last_seen, resolved rows
    from resolved_at; a row exactly at the cut-off stays. Each run records one REJECTS_EXPIRED event
    per reject table in <meta>.assay_events (also a count of zero); a dry run deletes and records
    nothing. The same rows, counts and events as the Python command (decision 0701).

    now: the clock, ISO 8601 text in UTC (default: when this dbt invocation started).
    meta_schema: where assay_events lives (default: the schema of the project's generated
    assay_events or assay_check_results model, else the literal 'assay_meta'). -#}
{% macro maintain(dry_run=false, now=none, meta_schema=none) %}
  {{ return(adapter.dispatch('maintain', 'assay')(dry_run, now, meta_schema)) }}
{% endmacro %}

{% macro default__maintain(dry_run=false, now=none, meta_schema=none) %}
  {%- if not execute -%}{{ return([]) }}{%- endif -%}
  {%- set clock = assay._maintenance_clock(now) -%}
  {%- set ns = namespace(meta=meta_schema, database=target.database) -%}
  {%- set rejects = [] -%}
  {%- for node in graph.nodes.values() | sort(attribute='unique_id') -%}
    {%- set meta = node.config.get('meta', {}) if node.config else {} -%}
    {%- if node.resource_type == 'model' and node.package_name == project_name -%}
      {%- if meta.get('retention') and meta.get('assay_entity') -%}
        {%- do rejects.append(node) -%}
      {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {#- the schema dbt built the generated meta models into (0930) -#}
  {%- set ns.meta = meta_schema or assay._built_meta_schema(none) -%}
  {%- set done = [] -%}
  {%- for node in rejects | sort(attribute='name') -%}
    {%- set relation = adapter.get_relation(database=node.database, schema=node.schema, identifier=node.alias or node.name) -%}
    {%- if relation is not none -%}
      {%- set retention = node.config.meta['retention'] -%}
      {%- set hours = (retention[:-1] | int) * {'h': 1, 'd': 24, 'w': 168}[retention[-1]] -%}
      {%- set cutoff = clock - modules.datetime.timedelta(hours=hours) -%}
      {%- set at = "cast('" ~ cutoff.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as " ~ assay.sql_type('timestamp') ~ ")" -%}
      {%- set unresolved_where = 'resolved_at is null and last_seen < ' ~ at -%}
      {%- set resolved_where = 'resolved_at is not null and resolved_at < ' ~ at -%}
      {%- set counts = run_query('select (select count(*) from ' ~ relation ~ ' where ' ~ unresolved_where ~ '), '
                                 ~ '(select count(*) from ' ~ relation ~ ' where ' ~ resolved_where ~ ')') -%}
      {%- set unresolved = counts.rows[0][0] | int -%}
      {%- set resolved = counts.rows[0][1] | int -%}
      {%- if not dry_run and unresolved + resolved > 0 -%}
        {%- call statement('assay_maintain_delete') -%}
          delete from {{ relation }} where ({{ unresolved_where }}) or ({{ resolved_where }})
        {%- endcall -%}
      {%- endif -%}
      {%- do done.append({'entity': node.config.meta['assay_entity'], 'table': node.schema ~ '.' ~ (node.alias or node.name),
                          'retention': retention, 'cutoff': cutoff, 'unresolved': unresolved, 'resolved': resolved}) -%}
      {{ log(node.schema ~ '.' ~ (node.alias or node.name) ~ ': ' ~ ('would delete ' if dry_run else 'deleted ')
             ~ (unresolved + resolved) ~ (' row' if unresolved + resolved == 1 else ' rows') ~ ' (retention ' ~ retention ~ ', cut-off ' ~ cutoff.isoformat(sep=' ')
             ~ ': ' ~ unresolved ~ ' unresolved, ' ~ resolved ~ ' resolved)', info=true) }}
    {%- endif -%}
  {%- endfor -%}
  {%- if not dry_run and done | length > 0 -%}
    {%- set events = assay._ensure_events_table(ns.database, ns.meta or 'assay_meta') -%}
    {%- call statement('assay_maintain_events') -%}
      insert into {{ events }} (event_id, event_type, run_id, table_name, check_name, why, row_count, cutoff, occurred_at) values
      {%- for e in done %}
        ({{ assay.string_literal(invocation_id ~ ':' ~ e['table']) }}, 'REJECTS_EXPIRED', {{ assay.string_literal(invocation_id) }},
         {{ assay.string_literal(e['table']) }}, null,
         {{ assay.string_literal('retention ' ~ e['retention'] ~ ': unresolved rows last seen before ' ~ e['cutoff'].isoformat(sep=' ')
                                 ~ ' and resolved rows resolved before it') }},
         {{ e['unresolved'] + e['resolved'] }},
         cast('{{ e['cutoff'].strftime('%Y-%m-%d %H:%M:%S.%f') }}' as {{ assay.sql_type('timestamp') }}),
         cast('{{ clock.strftime('%Y-%m-%d %H:%M:%S.%f') }}' as {{ assay.sql_type('timestamp') }})){{ ',' if not loop.last }}
      {%- endfor %}
    {%- endcall -%}
    {{ log('recorded one REJECTS_EXPIRED event per table in ' ~ events, info=true) }}
  {%- endif -%}
  {#- run-operation leaves its transaction open and rolls it back unless the macro commits. -#}
  {%- if not dry_run -%}
    {%- do adapter.commit() -%}
  {%- endif -%}
  {%- if done | length == 0 -%}
    {{ log('no reject tables with a retention were found; nothing to do', info=true) }}
  {%- endif -%}
  {{ return(done) }}
{% endmacro %}
