{#- An anomaly check judged at build time against the band the detector learnt from earlier runs
    (decision 1030): the engine's doubles recorded as text, read as exact decimals; an edge passes;
    fewer eligible earlier runs than min_history, or no value (a first run, no rows), is not judged.
    The sentence is assay.checks.anomaly.anomaly_detail's, word for word, with its band printed
    as _band_texts prints it (tests/dbt_package/test_verdict_agreement.py holds the two equal). -#}
{% macro _anomaly_verdict(check, m) %}
  {%- set b = check['bounds'] -%}
  {%- set volume = b['metric'] == 'volume' -%}
  {%- set needed = (b.get('min_history') or 0) | int -%}
  {%- set history = (m.get('history') or 0) | int -%}
  {%- set observed = assay._decimal_parts(m['observed']) if m.get('observed') is not none else none -%}
  {%- set low = assay._decimal_parts(m['low']) if m.get('low') is not none else none -%}
  {%- set high = assay._decimal_parts(m['high']) if m.get('high') is not none else none -%}
  {%- if volume -%}
    {%- set what = 'the volume of this load' -%}
    {%- if observed is none -%}
      {{ return({'passed': true, 'detail': 'no earlier run of the entity is recorded, so no load is measured and the volume '
                 ~ 'is not judged against a band learnt from earlier runs'}) }}
    {%- endif -%}
    {%- set shown = assay._decimal_text(observed) -%}
    {%- if observed['n'] >= 0 -%}
      {%- set now = 'loaded ' ~ shown ~ (' row' if shown == '1' else ' rows') ~ ' since the previous run' -%}
    {%- else -%}
      {#- bronze pruned by more than it received: said as the change limit says it -#}
      {%- set lost = assay._decimal_text({'n': 0 - observed['n'], 'e': observed['e']}) -%}
      {%- set now = 'bronze lost ' ~ lost ~ (' row' if lost == '1' else ' rows') ~ ' since the previous run (a load of ' ~ shown ~ ')' -%}
    {%- endif -%}
  {%- else -%}
    {%- set what = 'the quarantine rate' if b['metric'] == 'quarantine_rate' else "the rule's failure rate" -%}
    {%- set head = 'quarantined' if b['metric'] == 'quarantine_rate' else 'rule ' ~ assay._quoted_text(b.get('rule') or '') ~ ' fired on' -%}
    {%- set now = head ~ ' ' ~ ((m.get('failing') or 0) | int) ~ ' of ' ~ assay._rows_text((m.get('evaluated') or 0) | int, 'evaluated row') -%}
    {%- if observed is none -%}
      {{ return({'passed': true, 'detail': now ~ ', so ' ~ what ~ ' is not judged against a band learnt from earlier runs'}) }}
    {%- endif -%}
  {%- endif -%}
  {%- if history < needed or low is none or high is none -%}
    {{ return({'passed': true, 'detail': now ~ '; ' ~ history ~ ' eligible earlier ' ~ ('run' if history == 1 else 'runs')
               ~ ' can be learnt from and ' ~ needed ~ ' are needed (min_history), so ' ~ what ~ ' is not judged'}) }}
  {%- endif -%}
  {%- set above = assay._decimal_below(m['high'], m['observed']) -%}
  {%- set below = assay._decimal_below(m['observed'], m['low']) -%}
  {#- the band shrunk to what it allows at the printed precision (low rounded up, high down), so a
      value printed above the band's high is above it (0100's reasoning); volume in whole rows -#}
  {%- set band = namespace(texts=none) -%}
  {%- for places in range(0 if volume else 4, 19) -%}
    {%- if band.texts is none -%}
    {%- set lo = assay._decimal_rounded(low, places, 'ceiling') -%}
    {%- set hi = assay._decimal_rounded(high, places, 'floor') -%}
    {%- set ob = assay._decimal_rounded(observed, places, 'ceiling' if above else ('floor' if below else 'half_even')) -%}
    {%- if (above == (ob['n'] > hi['n'])) and (below == (ob['n'] < lo['n'])) -%}
      {%- set band.texts = [assay._decimal_text(ob), assay._decimal_text(lo), assay._decimal_text(hi)] -%}
    {%- endif -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set ob_text, lo_text, hi_text = band.texts or [assay._decimal_text(observed), assay._decimal_text(low), assay._decimal_text(high)] -%}
  {%- if not volume -%}
    {%- set now = now ~ ', a rate of ' ~ ob_text -%}
  {%- endif -%}
  {%- set learnt_from = (m.get('learnt_from') or 0) | int -%}
  {%- set learnt = learnt_from ~ ' earlier ' ~ ('run' if learnt_from == 1 else 'runs') -%}
  {%- set day = assay._weekday_name(m.get('run_date')) if m.get('season') == 'weekday' else none -%}
  {%- if day -%}
    {%- set learnt = (learnt ~ ' on ' ~ day ~ 's') if learnt_from != 1 else ('1 earlier run on a ' ~ day) -%}
  {%- endif -%}
  {%- set median = assay._decimal_parts(m['median']) if m.get('median') is not none else none -%}
  {%- set centre = (' (median ' ~ assay._decimal_text(assay._decimal_rounded(median, 0 if volume else 4, 'half_even')) ~ ')') if median is not none else '' -%}
  {{ return({'passed': not above and not below, 'detail': now ~ ', ' ~ ('above' if above else ('below' if below else 'within'))
             ~ ' the band [' ~ lo_text ~ ', ' ~ hi_text ~ '] learnt from ' ~ learnt ~ centre}) }}
{% endmacro %}
