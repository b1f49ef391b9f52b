{#- The result of a declared check the measuring query did not measure (decisions 0530, 0531):
    `outcome` says why. Over a budget it is `not_evaluated` (passed false, 000's prefix); when
    the candidate could not be read it is errored (passed false, the engine's message). The
    measures record the reason, so `assay checks` renders the same sentence later. -#}
{% macro _declared_unmeasured(check, outcome, rows) %}
  {%- if outcome['status'] == 'error' -%}
    {%- set m = {'rows': rows, 'error': outcome['message'] | string} -%}
    {{ return({'passed': false, 'measures': m, 'detail': 'DECLARED_CHECK_UNREADABLE: ' ~ m['error']}) }}
  {%- elif outcome['code'] == 'CHECK_TIME_BUDGET_EXCEEDED' -%}
    {%- set m = {'rows': rows, 'not_evaluated': {'code': outcome['code'], 'ceiling_seconds': outcome['ceiling_seconds']}} -%}
    {{ return({'passed': false, 'measures': m, 'detail': 'not_evaluated: CHECK_TIME_BUDGET_EXCEEDED: the pass over the stored rows ran past the '
        ~ outcome['ceiling_seconds'] ~ '-second ceiling'}) }}
  {%- else -%}
    {%- set m = {'rows': rows, 'not_evaluated': {'code': outcome['code'], 'estimated_bytes': outcome['estimated_bytes'],
                 'ceiling_bytes': outcome['ceiling_bytes']}} -%}
    {{ return({'passed': false, 'measures': m, 'detail': 'not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of '
        ~ outcome['estimated_bytes'] ~ ' bytes exceeds the ' ~ outcome['ceiling_bytes'] ~ '-byte ceiling'}) }}
  {%- endif -%}
{% endmacro %}
