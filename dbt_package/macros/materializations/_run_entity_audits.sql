{#
  Runs the generated audits of an entity on a candidate relation and returns
  one sentence per audit that found violating rows. Each audit is counted
  with one query; the counts are what the run reports.
#}
{% macro _run_entity_audits(candidate, audits_macro) %}
  {%- set failures = [] -%}
  {%- if audits_macro -%}
    {#- Looked up by name in the project's namespace: the generator writes one such macro per entity. -#}
    {%- set audits_of = context.get(audits_macro) or context.get('default__' ~ audits_macro) -%}
    {%- if audits_of is none -%}
      {{ exceptions.raise_compiler_error('assay: no audits macro ' ~ audits_macro ~ ' in this project; run `assay generate dbt` again.') }}
    {%- endif -%}
    {%- set audits = audits_of(candidate) -%}
    {%- for audit in audits -%}
      {%- set result = run_query('select count(*) as n from (' ~ audit['sql'] ~ ') as assay_audit') -%}
      {%- set n = result.columns[0].values()[0] | int -%}
      {%- if n > 0 -%}
        {%- do failures.append(audit['name'] | upper ~ ': ' ~ n ~ ' violating row' ~ ('' if n == 1 else 's')) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(failures) }}
{% endmacro %}
