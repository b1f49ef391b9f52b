{#- The audit for an on_fail: fail rule: every row whose flags name the rule. -#}
{% test assay_fail_rule(model, rule_name, flags_column='_quality_flags') %}
  {{ return(adapter.dispatch('test_assay_fail_rule', 'assay')(model, rule_name, flags_column)) }}
{% endtest %}

{% macro default__test_assay_fail_rule(model, rule_name, flags_column='_quality_flags') %}
select *
from {{ model }}
where {{ assay.flags_contain(flags_column, rule_name) }}
{% endmacro %}
