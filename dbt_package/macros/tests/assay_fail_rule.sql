{#- The audit for an on_fail: fail rule: every row whose flags name the rule. The same query as
    the blocking audit `fail_rule_violations` that the assay_entity materialization runs. -#}
{% test assay_fail_rule(model, rule_name, flags_column='_quality_flags') %}
  {{ return(adapter.dispatch('test_assay_fail_rule', 'assay')(model, rule_name, flags_column)) }}
{% endtest %}

{% macro default__test_assay_fail_rule(model, rule_name, flags_column='_quality_flags') %}
{{ assay.fail_rule_violations(model, rule_name, flags_column) }}
{% endmacro %}
