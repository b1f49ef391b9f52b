{#
  Stops an incremental build of a ledger that an earlier spec built: its stored rows
  are read back column by column, so a missing column would otherwise surface as an
  engine binding error that does not say what to do. `columns` are the names the
  build reads from the ledger. Does nothing outside an incremental run.
#}
{% macro incremental_ledger_check(relation, columns) %}
  {%- if execute and is_incremental() -%}
    {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name') | map('lower') | list -%}
    {%- set missing = [] -%}
    {%- for c in columns if c | lower not in have -%}{%- do missing.append(c) -%}{%- endfor -%}
    {%- if missing -%}
      {{ exceptions.raise_compiler_error('assay: ' ~ relation ~ ' is the ledger of an incremental entity and was built for another spec (it has no ' ~ missing | join(', ') ~ '); rebuild it from bronze with `dbt build --full-refresh --select ' ~ relation.identifier ~ '+`.') }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}
