{#- Names go into the SQL unquoted-safe only because they are [a-z0-9_]+, and the order is
    part of the observable result; both are the generator's promise, checked here. -#}
{% macro _checked_flags(flags) %}
  {%- set names = [] -%}
  {%- for f in flags -%}
    {%- if not modules.re.match('^[a-z0-9_]+$', f[0] | string) -%}
      {{ exceptions.raise_compiler_error("assay.quality_flags: rule name '" ~ f[0] ~ "' is not [a-z0-9_]+") }}
    {%- endif -%}
    {%- do names.append(f[0]) -%}
  {%- endfor -%}
  {%- if names != (names | sort) or names | length != names | unique | list | length -%}
    {{ exceptions.raise_compiler_error("assay.quality_flags: rule names must be unique and sorted: " ~ names | join(', ')) }}
  {%- endif -%}
  {{ return(flags) }}
{% endmacro %}
