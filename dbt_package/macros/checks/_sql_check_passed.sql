{#- The recorded verdict of a SQL check file (document 002) that returned `n` rows: it passes
    with no rows, and a `warn` check passes with rows too (it is logged, not failed). The same rule
    as `assay.checks.recorded.verdict_of` for kind 'sql'. -#}
{% macro _sql_check_passed(n, on_failure) %}
  {{ return(n == 0 or on_failure == 'warn') }}
{% endmacro %}
