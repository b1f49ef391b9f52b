{#- The audit for an on_fail: fail rule: every row whose flags name the rule. The same query as
    the blocking audit `fail_rule_violations` that the assay_entity materialization runs.

    `columns`: what the test selects of each row, as SQL identifiers (the generator gives the
    lineage columns, the key fields not classified pii, `_route` and the flags column). dbt's
    `--store-failures` copies a test's rows into `dbt_test__audit`, outside the tables the spec
    governs and their grants, so the generated test never selects a field that may hold a pii value
    (decision 1156); one row per violating row, so the count is the audit's. Without it, every column, as before. -#}
{% test assay_fail_rule(model, rule_name, flags_column='_quality_flags', columns=none) %}
  {{ return(adapter.dispatch('test_assay_fail_rule', 'assay')(model, rule_name, flags_column, columns)) }}
{% endtest %}

{% macro default__test_assay_fail_rule(model, rule_name, flags_column='_quality_flags', columns=none) %}
{%- if columns -%}
select {% for c in columns %}assay_v.{{ c }}{% if not loop.last %}, {% endif %}{% endfor %}
from (
{{ assay.fail_rule_violations(model, rule_name, flags_column) }}
) as assay_v
{%- else -%}
{{ assay.fail_rule_violations(model, rule_name, flags_column) }}
{%- endif %}
{% endmacro %}
