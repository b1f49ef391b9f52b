{# Rows that carry a `fail` rule among their flags: a blocking rule that a row broke. #}
{% macro fail_rule_violations(relation, rule_name, flags_column='_quality_flags') %}
  {{ return(adapter.dispatch('fail_rule_violations', 'assay')(relation, rule_name, flags_column)) }}
{% endmacro %}

{% macro default__fail_rule_violations(relation, rule_name, flags_column='_quality_flags') %}
select *
from {{ relation }}
where {{ assay.flags_contain(flags_column, rule_name) }}
{% endmacro %}
