{#
  A type-2 history's columns take the types the spec gives its fields now (an outside tester,
  session 41). dbt's snapshot adds a new column but never changes a stored column's type: after
  `seats: int` became `decimal(5,1)`, a delivered 40.5 was written into the history's BIGINT
  column as 41 and opened a version for a change the data never made, silently.

  A pre-hook of the snapshot (and of the assay_history model): each column the history and the
  kept rows (`current`) both hold, whose types differ, is altered to the kept rows' type before
  the versions are compared, so the stored values are compared and kept in the new type. A stored
  value the new type cannot hold is not converted to NULL: the node stops and says how many
  versions hold one (never the values), for the owner to migrate the column. An engine that cannot
  change a column's type in place (Spark parquet) stops the node and says so.
#}
{% macro align_history_types(history, current) -%}
  {{ return(adapter.dispatch('align_history_types', 'assay')(history, current)) }}
{%- endmacro %}

{% macro default__align_history_types(history, current) -%}
  {%- if not execute -%}{{ return('') }}{%- endif -%}
  {%- set stored = load_relation(history) -%}
  {%- if stored is none -%}{{ return('') }}{%- endif -%}
  {%- set now = {} -%}
  {%- for c in adapter.get_columns_in_relation(current) -%}
    {%- do now.update({c.name | lower: c}) -%}
  {%- endfor -%}
  {%- for c in adapter.get_columns_in_relation(stored) -%}
    {%- set wanted = now.get(c.name | lower) -%}
    {%- if wanted is not none and (wanted.data_type | lower) != (c.data_type | lower) -%}
      {%- set unreadable = run_query(assay._unreadable_history_values(stored, c.name, wanted.data_type)).columns[0].values()[0] -%}
      {%- if unreadable | int > 0 -%}
        {{ exceptions.raise_compiler_error('HISTORY_TYPE_CHANGED: ' ~ stored ~ ' holds ' ~ c.name ~ ' as ' ~ c.data_type
            ~ ' and the spec now gives it ' ~ wanted.data_type ~ ', but ' ~ unreadable ~ ' of its versions hold a value '
            ~ wanted.data_type ~ ' cannot hold. The history keeps what it recorded: convert or clear those values '
            ~ '(then alter the column to ' ~ wanted.data_type ~ '), or give the field a type that holds them, and build again.') }}
      {%- endif -%}
      {%- do run_query(assay._alter_history_column(stored, c.name, wanted.data_type)) -%}
      {{ log('assay: ' ~ stored ~ '.' ~ c.name ~ ' is now ' ~ wanted.data_type ~ ' (was ' ~ c.data_type ~ '), as the spec gives it', info=True) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return('') }}
{%- endmacro %}
