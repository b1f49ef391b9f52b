{#- A change limit (decision 0981): this run's counts against the previous successful run's (and,
    for volume, the run before it), in integers; at the factor or the floor passes, and with no
    earlier successful run nothing is judged. The sentences are
    assay.checks.increases.increase_detail's, word for word (tests/dbt_package/test_verdict_agreement.py
    holds the two equal). -#}
{% macro _increase_verdict(check, m) %}
  {%- set b = check['bounds'] -%}
  {%- set kind = check['kind'] -%}
  {%- set factor = b['factor'] ~ '' -%}
  {%- set parts = factor.split('.') -%}
  {%- set frac = parts[1] if parts | length > 1 else '' -%}
  {%- set digits = (parts[0] ~ frac) | int -%}
  {%- set scale = 10 ** (frac | length) -%}
  {%- set f = assay._decimal_parts(factor) -%}
  {%- set floor = (b.get('floor') or 0) | int -%}
  {%- set limits = 'the declared factor ' ~ factor ~ ' and floor of ' ~ assay._rows_text(floor) -%}
  {%- set run = m.get('previous_run') -%}
  {%- set run_named = ('run ' ~ run) if run else 'run (unknown id)' -%}
  {%- if kind == 'volume_change' -%}
    {%- set bronze = (m['bronze'] or 0) | int -%}
    {%- set before = m.get('previous_bronze') -%}
    {%- set earlier = m.get('earlier_bronze') -%}
    {%- if not run or before is none -%}
      {{ return({'passed': true, 'detail': 'bronze holds ' ~ assay._rows_text(bronze) ~ '; no earlier successful run of the entity '
                 ~ 'is recorded, so the volume of this load is not judged against ' ~ limits}) }}
    {%- endif -%}
    {%- set before = before | int -%}
    {%- set load = bronze - before -%}
    {#- a negative load is bronze shrinking (rows pruned): said so, not as `loaded -10 rows` -#}
    {%- set grew = ('loaded ' ~ assay._rows_text(load)) if load >= 0 else ('bronze lost ' ~ assay._rows_text(0 - load) ~ ' (a load of ' ~ load ~ ')') -%}
    {%- set now = grew ~ ' since the previous successful ' ~ run_named ~ ' (bronze rows ' ~ before ~ ' -> ' ~ bronze ~ ')' -%}
    {%- if not m.get('earlier_run') or earlier is none -%}
      {{ return({'passed': true, 'detail': now ~ '; only one earlier successful run is recorded, so there is no previous load '
                 ~ 'to compare with, and the volume is not judged against ' ~ limits}) }}
    {%- endif -%}
    {%- set previous = before - (earlier | int) -%}
    {%- set up = load * scale > digits * previous and load > previous + floor -%}
    {%- set down = load * digits < previous * scale and load < previous - floor -%}
    {%- set against = now ~ ', against ' ~ assay._rows_text(previous) ~ ' loaded between run ' ~ m['earlier_run'] ~ ' and ' ~ run_named -%}
    {%- if up -%}
      {{ return({'passed': false, 'detail': against ~ ': above both ' ~ previous ~ ' x ' ~ factor ~ ' = '
                 ~ assay._decimal_text({'n': previous * f['n'], 'e': f['e']}) ~ ' (the declared factor) and '
                 ~ previous ~ ' + ' ~ floor ~ ' = ' ~ (previous + floor) ~ ' (the declared floor)'}) }}
    {%- elif down -%}
      {{ return({'passed': false, 'detail': against ~ ': below both ' ~ previous ~ ' / ' ~ factor ~ ' = '
                 ~ assay._ceil_ratio(previous * scale, digits) ~ ' (the declared factor) and '
                 ~ previous ~ ' - ' ~ floor ~ ' = ' ~ (previous - floor) ~ ' (the declared floor)'}) }}
    {%- endif -%}
    {{ return({'passed': true, 'detail': against ~ ': within ' ~ limits ~ ' in both directions'}) }}
  {%- endif -%}
  {%- set failing = (m['failing'] or 0) | int -%}
  {%- set previous = m.get('previous_failing') -%}
  {%- if kind == 'rule_increase' -%}
    {%- set now = 'rule ' ~ assay._quoted_text(b.get('rule') or '') ~ ' fired on ' ~ assay._rows_text(failing) -%}
    {%- if not run -%}
      {{ return({'passed': true, 'detail': now ~ '; no earlier successful run of the entity is recorded, so the increase is '
                 ~ 'not judged against ' ~ limits}) }}
    {%- elif previous is none -%}
      {{ return({'passed': true, 'detail': now ~ '; the previous successful ' ~ run_named ~ ' recorded no count for the rule, '
                 ~ 'so the increase is not judged against ' ~ limits}) }}
    {%- endif -%}
    {%- set previous = previous | int -%}
    {%- set breach = failing * scale > digits * previous and failing > previous + floor -%}
    {{ return({'passed': not breach, 'detail': now ~ ', against ' ~ previous ~ ' in the previous successful ' ~ run_named ~ ': '
               ~ ('above both' if breach else 'not above both') ~ ' ' ~ previous ~ ' x ' ~ factor ~ ' = '
               ~ assay._decimal_text({'n': previous * f['n'], 'e': f['e']}) ~ ' (the declared factor) and '
               ~ previous ~ ' + ' ~ floor ~ ' = ' ~ (previous + floor) ~ ' (the declared floor)'}) }}
  {%- endif -%}
  {%- set evaluated = (m['evaluated'] or 0) | int -%}
  {%- set before = (m.get('previous_evaluated') or 0) | int -%}
  {%- set now = 'quarantined ' ~ failing ~ ' of ' ~ assay._rows_text(evaluated, 'evaluated row') -%}
  {%- if not run -%}
    {{ return({'passed': true, 'detail': now ~ '; no earlier successful run of the entity is recorded, so the increase of '
               ~ 'the quarantine rate is not judged against ' ~ limits}) }}
  {%- elif evaluated <= 0 or before == 0 or previous is none -%}
    {{ return({'passed': true, 'detail': now ~ '; no rows were evaluated in ' ~ ('this run' if evaluated <= 0 else 'the previous successful ' ~ run_named)
               ~ ', so the increase of the quarantine rate is not judged against ' ~ limits}) }}
  {%- endif -%}
  {%- set previous = previous | int -%}
  {#- rate > previous rate x factor, and (rate - previous rate) x evaluated > floor, in integers -#}
  {%- set excess = failing * before - previous * evaluated -%}
  {%- set breach = failing * before * scale > digits * previous * evaluated and excess > floor * before -%}
  {{ return({'passed': not breach, 'detail': now ~ ', a rate of ' ~ assay._ceil_ratio(failing, evaluated) ~ ', against '
             ~ assay._ceil_ratio(previous, before) ~ ' (' ~ previous ~ ' of ' ~ before ~ ') in the previous successful ' ~ run_named ~ ': '
             ~ ('above both' if breach else 'not above both') ~ ' '
             ~ assay._ceil_ratio(previous * digits, before * scale, [4, ((scale ~ '') | length) - 1] | max)
             ~ ' (the previous rate x the declared factor ' ~ factor ~ ') and, by ' ~ assay._ceil_ratio(excess, before)
             ~ " rows of this run's " ~ evaluated ~ ', the previous rate plus the declared floor of ' ~ assay._rows_text(floor)}) }}
{% endmacro %}
