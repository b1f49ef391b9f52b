{#
  The check task of a table assay only reads (`tables_version: 1`): a bronze source, or a model
  of the user's own project (decision 0520).

  The generated node `assay_checks__<schema>__<table>` selects from the table, so dbt runs it
  after a user model it checks; the staged models that extract from a checked bronze source
  depend on it, so dbt runs it before them. It runs every check of the table on the table as
  it is, records each result in <meta>.assay_check_results, and fails with CHECK_FAILED when a
  `required`, `block` or `keep` check failed, so dbt skips what reads the table in that run.
  It creates nothing and sets nothing back: assay did not write the table.

  When the checked model is itself built by `assay_entity` (the user opted into
  write-audit-publish with the same `assay_audits`), its checks already ran on its candidate
  before it was published, and this task only says so.
#}
{% materialization assay_check_task, default %}
  {%- set audits = config.get('assay_audits') -%}
  {%- set table = config.get('assay_table') -%}
  {%- set checked_name = audits | replace('assay_audits__', 'assay_checked__') -%}
  {%- set checked_of = context.get(checked_name) or context.get('default__' ~ checked_name) -%}
  {%- if checked_of is none -%}
    {{ exceptions.raise_compiler_error('assay: no macro ' ~ checked_name ~ ' in this project; run `assay generate dbt` again.') }}
  {%- endif -%}
  {%- set checked = checked_of() -%}

  {%- set own = namespace(publish=false) -%}
  {%- for uid in model.depends_on.nodes -%}
    {%- set node = graph.nodes.get(uid) -%}
    {%- if node and node.resource_type == 'model' and node.config.materialized == 'assay_entity' and node.config.get('assay_audits') == audits -%}
      {%- set own.publish = true -%}
    {%- endif -%}
  {%- endfor -%}

  {{ run_hooks(pre_hooks) }}
  {%- set failures = [] -%}
  {%- if own.publish -%}
    {%- do log('assay: the checks of ' ~ table ~ ' ran in its own write-audit-publish step', info=true) -%}
  {%- elif adapter.get_relation(database=checked.database, schema=checked.schema, identifier=checked.identifier) is none -%}
    {{ exceptions.raise_compiler_error('DECLARED_CHECK_UNREADABLE: ' ~ table ~ ' (' ~ checked ~ ') does not exist, so none of its checks could run; load or build it first.') }}
  {%- else -%}
    {%- set report = {'kept': [], 'failed': [], 'outcomes': {}} -%}
    {#- A SQL check whose query errors is a result, not the end of the task (decision 0511): engines
        that catch errors only in Python count the checks first, in a statement only a
        materialization may submit (as assay_entity does). -#}
    {%- set probe = assay._sql_check_probe(checked, audits) -%}
    {% if probe is not none %}
      {#- The probe runs in autocommit: open and end this connection's transaction first. -#}
      {% call statement('assay_check_task_begin') -%}select 1{%- endcall %}
      {{ adapter.commit() }}
      {% call statement('assay_sql_check_probe', language='python') -%}{{ probe['code'] }}{%- endcall %}
      {%- do report.update({'outcomes': assay._sql_check_outcomes()}) -%}
    {% endif %}
    {%- set failures = assay._run_table_checks(checked, audits, table, config.get('assay_meta_schema'), report) -%}
    {#- The results stay recorded whatever happens next. -#}
    {%- do adapter.commit() -%}
  {%- endif -%}
  {% if failures | length > 0 %}
    {{ exceptions.raise_compiler_error('CHECK_FAILED: ' ~ (failures | join('; ')) ~ '. ' ~ table ~ ' is a table assay only reads: nothing was set back, and what reads it was not built.') }}
  {% endif %}
  {#- After the checks: a size estimate reads the `main` result of a table build (_candidate_size). -#}
  {% call statement('main') -%}
    select 1 as assay_checked
  {%- endcall %}
  {{ run_hooks(post_hooks) }}
  {{ return({'relations': []}) }}
{% endmaterialization %}
