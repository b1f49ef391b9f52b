{% macro install_functions() -%}
  {{ return(adapter.dispatch('install_functions', 'assay')()) }}
{%- endmacro %}

{% macro default__install_functions() -%}
{%- endmacro %}

{#- Only class-22 (data_exception) errors mean "does not convert"; anything else, such as an
    unknown type name, is a bug and must still fail the run. STRICT: NULL in, NULL out, like
    pg_input_is_valid. Not PARALLEL SAFE: the EXCEPTION block opens a subtransaction, which
    parallel workers cannot do. -#}
{% macro postgres__install_functions() -%}
  {%- if assay._postgres_version_num() < 160000 -%}
create schema if not exists {{ assay._postgres_udf_schema() }};
create or replace function {{ assay._postgres_udf_schema() }}.assay_input_is_valid(value text, type_name text)
returns boolean language plpgsql stable strict as $assay$
begin
  execute format('select %L::%s', value, type_name);
  return true;
exception when data_exception then
  return false;
end
$assay$;
  {%- endif -%}
{%- endmacro %}

{#- Redshift inherits postgres__ macros but has TRY_CAST and no plpgsql of this shape. -#}
{% macro redshift__install_functions() -%}
{%- endmacro %}
