{#- How many stored versions hold a value of `column` the new type cannot read. -#}
{% macro _unreadable_history_values(relation, column, data_type) -%}
  {{ return(adapter.dispatch('_unreadable_history_values', 'assay')(relation, column, data_type)) }}
{%- endmacro %}

{% macro default___unreadable_history_values(relation, column, data_type) -%}
  {{ return('select count(*) from ' ~ relation ~ ' where ' ~ adapter.quote(column) ~ ' is not null and try_cast('
            ~ adapter.quote(column) ~ ' as ' ~ data_type ~ ') is null') }}
{%- endmacro %}

{% macro postgres___unreadable_history_values(relation, column, data_type) -%}
  {%- set value = 'cast(' ~ adapter.quote(column) ~ ' as text)' -%}
  {%- if assay._postgres_version_num() >= 160000 -%}
    {%- set readable = 'pg_input_is_valid(' ~ value ~ ", '" ~ data_type ~ "')" -%}
  {%- else -%}
    {%- set readable = assay._postgres_udf_schema() ~ '.assay_input_is_valid(' ~ value ~ ", '" ~ data_type ~ "')" -%}
  {%- endif -%}
  {{ return('select count(*) from ' ~ relation ~ ' where ' ~ adapter.quote(column) ~ ' is not null and not ' ~ readable) }}
{%- endmacro %}
