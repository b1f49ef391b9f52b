{#- `n rows`, or `1 row`: the count words of the threshold sentences (assay.checks.increases._rows). -#}
{% macro _rows_text(n, noun='row') %}
  {{ return(n ~ ' ' ~ noun ~ ('' if n == 1 else 's')) }}
{% endmacro %}
