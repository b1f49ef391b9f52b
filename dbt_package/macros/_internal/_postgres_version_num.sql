{#- The server decides which try_cast guard exists (pg_input_is_valid is 16+), so it is read
    from the connection. `var('assay_postgres_version_num')` pins it, e.g. for `dbt compile`
    without a database; at parse time (execute = false) the SQL is never run. -#}
{% macro _postgres_version_num() %}
  {%- set pinned = var('assay_postgres_version_num', none) -%}
  {%- if pinned is not none -%}
    {{ return(pinned | int) }}
  {%- endif -%}
  {%- if not execute -%}
    {{ return(180000) }}
  {%- endif -%}
  {%- set result = run_query("select current_setting('server_version_num')::int") -%}
  {{ return(result.columns[0].values()[0] | int) }}
{% endmacro %}
