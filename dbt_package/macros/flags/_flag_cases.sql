{#- A CASE without ELSE is NULL when the predicate is FALSE or UNKNOWN: a rule fires only on
    TRUE. The engines below then drop the NULLs. -#}
{% macro _flag_cases(flags) %}
  {%- set cases = [] -%}
  {%- for f in assay._checked_flags(flags) -%}
    {%- do cases.append("CASE WHEN (" ~ f[1] ~ ") THEN '" ~ f[0] ~ "' END") -%}
  {%- endfor -%}
  {{ return(cases) }}
{% endmacro %}
