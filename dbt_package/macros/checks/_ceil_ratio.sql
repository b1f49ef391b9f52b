{#- `numerator / denominator` rounded UP to `places`, as exact text without trailing zeros (0100's
    reasoning: a value above a limit never prints at the limit). Twin of
    assay.checks.detail.rate_text and assay.checks.increases._ratio, held equal by
    tests/dbt_package/test_verdict_agreement.py. -#}
{% macro _ceil_ratio(numerator, denominator, places=4) %}
  {%- set scaled = 0 - ((0 - numerator * 10 ** places) // denominator) -%}
  {{ return(assay._decimal_text({'n': scaled, 'e': 0 - places})) }}
{% endmacro %}
