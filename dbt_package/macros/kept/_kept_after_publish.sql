{#- After a build of `table` was published (decision 0512): a failing keep check marks it (TABLE_KEPT,
    naming the first failed keep check and "and N more"); otherwise a mark it carried is cleared
    (TABLE_KEPT_CLEARED: why checks_passed when the table has checks in this project version,
    rebuilt_without_checks when it has none). Records those events after `events` (the build's
    CHECK_FAILED events) and returns the message the node fails with when the table is now kept,
    else none. The caller commits. -#}
{% macro _kept_after_publish(relation, table, meta_schema, kept, events, checked) %}
  {%- if not meta_schema -%}{{ return(none) }}{%- endif -%}
  {%- set out = [] -%}
  {%- do out.extend(events) -%}
  {%- set message = none -%}
  {%- if kept -%}
    {%- set check = kept[0] ~ ((' and ' ~ (kept | length - 1) ~ ' more') if kept | length > 1 else '') -%}
    {%- do out.append({'type': 'TABLE_KEPT', 'table': table, 'check': check, 'why': 'keep_check_failed', 'rows': kept | length}) -%}
    {%- set message = 'TABLE_KEPT: ' ~ relation ~ ' was published and kept by run ' ~ invocation_id ~ ': check ' ~ check
        ~ ' failed. Every assay model that reads it is refused until its checks pass; see `assay table get ' ~ table ~ '`.' -%}
  {%- else -%}
    {%- set mark = assay._kept_mark(relation.database, meta_schema, table) -%}
    {%- if mark is not none -%}
      {%- do out.append({'type': 'TABLE_KEPT_CLEARED', 'table': table, 'check': mark['check'],
                         'why': 'checks_passed' if checked else 'rebuilt_without_checks'}) -%}
      {%- do log('assay: ' ~ table ~ ' was kept since run ' ~ mark['run_id'] ~ '; this build published it, so the mark is cleared', info=true) -%}
    {%- endif -%}
  {%- endif -%}
  {%- do assay._record_events(relation.database, meta_schema, out) -%}
  {{ return(message) }}
{% endmacro %}
