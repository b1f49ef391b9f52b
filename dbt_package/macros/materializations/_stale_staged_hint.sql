{#- The sentence that ends a set-back's error when an audit that read the entity's staged relation
    failed and this invocation did not build that relation (decision 0988): `dbt build --select
    <entity>`, `<entity>+` or `dbt retry` rebuild the entity from a staged table an earlier build
    wrote, which the conservation audit finds older than bronze. The generated audits macro names
    the staged model of such an audit as its `staged`; '' when none applies. -#}
{% macro _stale_staged_hint(candidate, audits_macro, failures) %}
  {%- if not audits_macro -%}{{ return('') }}{%- endif -%}
  {%- set audits_of = context.get(audits_macro) or context.get('default__' ~ audits_macro) -%}
  {%- if audits_of is none -%}{{ return('') }}{%- endif -%}
  {%- for audit in audits_of(candidate) if audit.get('staged') and not assay.built_this_run(audit['staged']) -%}
    {%- for f in failures if f.startswith(audit['name'] | upper ~ ': ') -%}
      {{ return(' ' ~ audit['staged'] ~ ' was not built by this invocation, so it may be older than bronze: '
                ~ 'build ' ~ audit['staged'] ~ '+ (dbt build --select ' ~ audit['staged'] ~ '+) to judge bronze as it is now.') }}
    {%- endfor -%}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}
