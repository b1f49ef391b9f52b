{#- The statement that changes the stored column's type, its values converted. -#}
{% macro _alter_history_column(relation, column, data_type) -%}
  {{ return(adapter.dispatch('_alter_history_column', 'assay')(relation, column, data_type)) }}
{%- endmacro %}

{% macro default___alter_history_column(relation, column, data_type) -%}
  {{ exceptions.raise_compiler_error('HISTORY_TYPE_CHANGED: ' ~ relation ~ '.' ~ column ~ ' has another type than the spec '
      ~ 'gives it now (' ~ data_type ~ '), and ' ~ target.type ~ ' cannot change a stored column\'s type in place: '
      ~ 'rebuild the history with the column converted, or give the field its former type.') }}
{%- endmacro %}

{% macro duckdb___alter_history_column(relation, column, data_type) -%}
  {{ return('alter table ' ~ relation ~ ' alter column ' ~ adapter.quote(column) ~ ' set data type ' ~ data_type) }}
{%- endmacro %}

{% macro postgres___alter_history_column(relation, column, data_type) -%}
  {{ return('alter table ' ~ relation ~ ' alter column ' ~ adapter.quote(column) ~ ' type ' ~ data_type
            ~ ' using ' ~ adapter.quote(column) ~ '::' ~ data_type) }}
{%- endmacro %}
