{#- A rate threshold (decision 0980): failing of evaluated staged rows against the exact decimal
    max_rate, compared in integers (failing * 10^s <= digits * evaluated); at the limit passes; no
    evaluated row, or fewer than min_rows, is not judged. The sentence is
    assay.checks.detail.rate_detail's, word for word (tests/dbt_package/test_verdict_agreement.py
    holds the two equal). -#}
{% macro _rate_verdict(check, m) %}
  {%- set b = check['bounds'] -%}
  {%- set kind = check['kind'] -%}
  {%- set evaluated = (m['evaluated'] or 0) | int -%}
  {%- set failing = (m['failing'] or 0) | int -%}
  {%- set max_rate = b['max_rate'] ~ '' -%}
  {%- set min_rows = (b.get('min_rows') or 0) | int -%}
  {%- if kind == 'rule_rate' -%}
    {%- set rule = assay._quoted_text(b.get('rule') or '') -%}
    {%- set verb, noun = 'rule ' ~ rule ~ ' fired on', 'the rate of rule ' ~ rule -%}
  {%- elif kind == 'quarantine_rate' -%}
    {%- set verb, noun = 'quarantined', 'the quarantine rate' -%}
  {%- else -%}
    {%- set verb, noun = 'flagged', 'the flag rate' -%}
  {%- endif -%}
  {%- set limit = 'the declared maximum of ' ~ max_rate -%}
  {%- if evaluated <= 0 -%}
    {{ return({'passed': true, 'detail': 'no rows were evaluated, so ' ~ noun ~ ' is not judged against ' ~ limit}) }}
  {%- endif -%}
  {%- set counts = verb ~ ' ' ~ failing ~ ' of ' ~ assay._rows_text(evaluated, 'evaluated row') -%}
  {%- if evaluated < min_rows -%}
    {{ return({'passed': true, 'detail': counts ~ ', fewer than the declared min_rows of ' ~ min_rows
               ~ ', so the rate is not judged against ' ~ limit}) }}
  {%- endif -%}
  {%- set parts = max_rate.split('.') -%}
  {%- set frac = parts[1] if parts | length > 1 else '' -%}
  {%- set ok = failing * (10 ** (frac | length)) <= ((parts[0] ~ frac) | int) * evaluated -%}
  {%- set rate = assay._ceil_ratio(failing, evaluated, [4, frac | length] | max) -%}
  {{ return({'passed': ok, 'detail': counts ~ ', a rate of ' ~ rate ~ ', ' ~ ('at or below' if ok else 'above') ~ ' ' ~ limit}) }}
{% endmacro %}
