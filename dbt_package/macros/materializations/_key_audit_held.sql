{#- Whether the entity's `key_unique` audit ran on the candidate (in `_run_entity_audits`, which
    returned `failures`) and found no repeated key. Only then may the declared checks run the
    measuring query's `key_proven_sql` form, which does not count the key's repeats again
    (decision 1010). -#}
{% macro _key_audit_held(candidate, audits_macro, failures) %}
  {%- if not audits_macro -%}{{ return(false) }}{%- endif -%}
  {%- set audits_of = context.get(audits_macro) or context.get('default__' ~ audits_macro) -%}
  {%- if audits_of is none -%}{{ return(false) }}{%- endif -%}
  {%- set ran = audits_of(candidate) | selectattr('name', 'equalto', 'key_unique') | list | length > 0 -%}
  {%- set failed = [] -%}
  {%- for f in failures if f.startswith('KEY_UNIQUE: ') -%}{%- do failed.append(f) -%}{%- endfor -%}
  {{ return(ran and failed | length == 0) }}
{% endmacro %}
