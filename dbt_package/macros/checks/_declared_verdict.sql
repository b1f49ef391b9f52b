{#- Pass/fail of one check from its measured numbers, with the sentence for the dbt error: 000's
    own (value_range, key_uniqueness and continuity fill the generator's frames, _framed_sentence).
    Integers only (counts, microseconds), or the engine's own exact decimals: never a float. -#}
{% macro _declared_verdict(check, m, gap) %}
  {%- set b = check['bounds'] -%}
  {%- set kind = check['kind'] -%}
  {%- set col = "'" ~ check['columns'][0] ~ "'" if check['columns'] else '' -%}
  {%- set rows = m['rows'] -%}
  {%- if kind == 'row_expectation' -%}
    {#- 000's sentences, word for word (assay.checks.detail.row_expectation_detail). -#}
    {%- set low = b.get('min_rows') -%}
    {%- set high = b.get('max_rows') -%}
    {%- set ok = (low is none or rows >= low) and (high is none or rows <= high) -%}
    {%- if low is not none and rows < low -%}
      {%- set detail = 'row count ' ~ rows ~ ' is below the declared minimum of ' ~ low -%}
    {%- elif high is not none and rows > high -%}
      {%- set detail = 'row count ' ~ rows ~ ' is above the declared maximum of ' ~ high -%}
    {%- elif low is not none and high is not none -%}
      {%- set detail = 'row count ' ~ rows ~ ' satisfies the declared bounds [' ~ low ~ ', ' ~ high ~ ']' -%}
    {%- elif low is not none -%}
      {%- set detail = 'row count ' ~ rows ~ ' satisfies the declared minimum of ' ~ low -%}
    {%- else -%}
      {%- set detail = 'row count ' ~ rows ~ ' satisfies the declared maximum of ' ~ high -%}
    {%- endif -%}
  {%- elif kind == 'null_ceiling' -%}
    {#- 000's sentence, word for word (assay.checks.detail.null_ceiling_detail): the share in ppm
        rounded up, so a single null never reads as 0 ppm. -#}
    {%- set ok = rows <= 0 or m['nulls'] * 1000000 <= b['max_null_ppm'] * rows -%}
    {%- set ppm = 0 if rows <= 0 else (m['nulls'] * 1000000 + rows - 1) // rows -%}
    {%- set detail = 'column ' ~ col ~ ' is ' ~ ppm ~ ' ppm null (' ~ m['nulls'] ~ ' of ' ~ rows ~ (' row' if rows == 1 else ' rows')
        ~ '), ' ~ ('at or below' if ok else 'above') ~ ' the declared ceiling of ' ~ b['max_null_ppm'] ~ ' ppm' -%}
  {%- elif kind in ('value_range', 'key_uniqueness', 'continuity') -%}
    {#- 000's failure sentence, filled into the frame the generator rendered through
        assay.checks.detail (decision 0945: the wording is written there only); a check that
        passed has no sentence here, `assay checks` renders it. -#}
    {%- set detail = none -%}
    {%- if kind == 'value_range' and not check['orderable'] -%}
      {%- set ok = false -%}
      {%- set detail = assay._framed_sentence(check, 'unorderable', {}) -%}
    {%- elif kind == 'value_range' -%}
      {%- set ok = m['outside'] == 0 -%}
      {%- if not ok -%}
        {#- which bound the smallest offending value broke: measured for a pii column (decision
            0937), else compared exactly with the declared minimum -#}
        {%- set side = m.get('side') or ('below' if assay._decimal_below(m['first'], b['min_value']) else 'above') -%}
        {%- set detail = assay._framed_sentence(check, side, {'first': assay._shown_value(check, m['first'], check['types'][0])}) -%}
      {%- endif -%}
    {%- elif kind == 'key_uniqueness' -%}
      {%- set ok = m['repeats'] == 0 -%}
      {%- if not ok -%}
        {%- set values = {'repeats': m['repeats'], 'rows': rows} -%}
        {%- for part in m['key'] or [] -%}
          {%- do values.update({'key_' ~ loop.index: assay._shown_value(check, part, check['types'][loop.index0], false)}) -%}
        {%- endfor -%}
        {%- set detail = assay._framed_sentence(check, 'repeats', values) -%}
      {%- endif -%}
    {%- elif check['domain'] is none -%}
      {%- set ok = false -%}
      {%- set detail = assay._framed_sentence(check, 'unmeasurable', {}) -%}
    {%- elif m['distinct'] <= 1 or gap is none -%}
      {%- set ok = true -%}
    {%- else -%}
      {%- set ok = gap <= b['max_gap_seconds'] * check['gap_scale'] -%}
      {%- if not ok -%}
        {%- set detail = assay._framed_sentence(check, 'gap', {
            'from': assay._shown_value(check, m['from'], check['types'][0]),
            'to': assay._shown_value(check, m['to'], check['types'][0]),
            'gap': assay._gap_shown(m['gap'], check['domain'], check['gap_scale'])}) -%}
      {%- endif -%}
    {%- endif -%}
  {%- elif kind in ('quarantine_rate', 'flag_rate', 'rule_rate') -%}
    {#- A rate threshold (decision 0980): failing of evaluated staged rows against the exact decimal
        max_rate, compared in integers (failing * 10^s <= digits * evaluated); at the limit passes. -#}
    {%- set evaluated = m['evaluated'] or 0 -%}
    {%- set failing = m['failing'] or 0 -%}
    {%- set parts = (b['max_rate'] ~ '').split('.') -%}
    {%- set frac = parts[1] if parts | length > 1 else '' -%}
    {%- set judged = evaluated > 0 and evaluated >= (b.get('min_rows') or 0) -%}
    {%- set ok = not judged or failing * (10 ** (frac | length)) <= ((parts[0] ~ frac) | int) * evaluated -%}
    {%- set what = ('rule ' ~ b.get('rule') ~ ' fired on') if kind == 'rule_rate' else ('quarantined' if kind == 'quarantine_rate' else 'flagged') -%}
    {%- set detail = what ~ ' ' ~ failing ~ ' of ' ~ evaluated ~ ' evaluated rows, '
        ~ (('above' if not ok else 'at or below') if judged else 'not judged against') ~ ' the declared maximum rate of ' ~ b['max_rate'] -%}
  {%- elif kind in ('quarantine_increase', 'rule_increase', 'volume_change') -%}
    {#- A change limit (decision 0981): this run's counts against the previous successful run's
        (and, for volume, the run before it), in integers; at the factor or the floor passes, and
        with no earlier successful run nothing is judged. Twin of assay.checks.increases. -#}
    {%- set parts = (b['factor'] ~ '').split('.') -%}
    {%- set frac = parts[1] if parts | length > 1 else '' -%}
    {%- set digits = (parts[0] ~ frac) | int -%}
    {%- set scale = 10 ** (frac | length) -%}
    {%- set floor = b.get('floor') or 0 -%}
    {%- set limits = ' the declared factor ' ~ b['factor'] ~ ' and floor of ' ~ floor ~ ' rows' -%}
    {%- if kind == 'volume_change' -%}
      {%- set bronze = m['bronze'] or 0 -%}
      {%- if not m.get('previous_run') or m.get('previous_bronze') is none or not m.get('earlier_run') or m.get('earlier_bronze') is none -%}
        {%- set ok = true -%}
        {%- set detail = 'bronze holds ' ~ bronze ~ ' rows; fewer than two earlier successful runs are recorded, so the load is not judged against' ~ limits -%}
      {%- else -%}
        {%- set load = bronze - m['previous_bronze'] -%}
        {%- set previous = m['previous_bronze'] - m['earlier_bronze'] -%}
        {%- set up = load * scale > digits * previous and load > previous + floor -%}
        {%- set down = load * digits < previous * scale and load < previous - floor -%}
        {%- set ok = not up and not down -%}
        {%- set detail = 'loaded ' ~ load ~ ' rows since run ' ~ m['previous_run'] ~ ', against ' ~ previous ~ ' before it: '
            ~ ('above both' if up else ('below both' if down else 'within')) ~ limits -%}
      {%- endif -%}
    {%- else -%}
      {%- set failing = m['failing'] or 0 -%}
      {%- set previous = m.get('previous_failing') -%}
      {%- set what = ('rule ' ~ b.get('rule') ~ ' fired on ' ~ failing ~ ' rows') if kind == 'rule_increase'
          else ('quarantined ' ~ failing ~ ' of ' ~ (m['evaluated'] or 0) ~ ' evaluated rows') -%}
      {%- if not m.get('previous_run') or previous is none -%}
        {%- set ok = true -%}
        {%- set detail = what ~ '; no earlier successful run is recorded, so the increase is not judged against' ~ limits -%}
      {%- elif kind == 'rule_increase' -%}
        {%- set ok = not (failing * scale > digits * previous and failing > previous + floor) -%}
        {%- set detail = what ~ ', against ' ~ previous ~ ' in run ' ~ m['previous_run'] ~ ': ' ~ ('not above both' if ok else 'above both') ~ limits -%}
      {%- else -%}
        {%- set evaluated = m['evaluated'] or 0 -%}
        {%- set before = m.get('previous_evaluated') or 0 -%}
        {%- if evaluated <= 0 or before <= 0 -%}
          {%- set ok = true -%}
          {%- set detail = what ~ '; no rows were evaluated in one of the two runs, so the increase is not judged against' ~ limits -%}
        {%- else -%}
          {%- set ok = not (failing * before * scale > digits * previous * evaluated
                            and failing * before - previous * evaluated > floor * before) -%}
          {%- set detail = what ~ ', against ' ~ previous ~ ' of ' ~ before ~ ' in run ' ~ m['previous_run'] ~ ': '
              ~ ('not above both' if ok else 'above both') ~ limits -%}
        {%- endif -%}
      {%- endif -%}
    {%- endif -%}
  {%- elif kind == 'anomaly' -%}
    {#- Judged at build time against the band the detector learnt from earlier runs (decision 1030):
        the engine's doubles recorded as text, which read back exactly; an edge passes; fewer
        eligible earlier runs than min_history, or no value (a first run, no rows), is not judged.
        Twin of assay.checks.anomaly.anomaly_detail. -#}
    {%- set what = (b['metric'] if b['metric'] != 'failure_rate' else 'rule ' ~ b.get('rule') ~ ' failure rate') -%}
    {%- set history = m.get('history') or 0 -%}
    {%- set needed = b.get('min_history') or 0 -%}
    {%- if m.get('observed') is none or m.get('low') is none or m.get('high') is none or history < needed -%}
      {%- set ok = true -%}
      {%- set detail = what ~ ' not judged: ' ~ history ~ ' eligible earlier runs can be learnt from and ' ~ needed ~ ' are needed' -%}
    {%- else -%}
      {%- set observed = m['observed'] | float -%}
      {%- set low = m['low'] | float -%}
      {%- set high = m['high'] | float -%}
      {%- set ok = low <= observed and observed <= high -%}
      {%- set detail = what ~ ' ' ~ m['observed'] ~ ', ' ~ ('within' if ok else ('above' if observed > high else 'below'))
          ~ ' the band [' ~ m['low'] ~ ', ' ~ m['high'] ~ '] learnt from ' ~ m.get('learnt_from') ~ ' earlier runs' -%}
    {%- endif -%}
  {%- else -%}
    {{ exceptions.raise_compiler_error('assay: unknown declared check kind ' ~ kind ~ '; run `assay generate dbt` again.') }}
  {%- endif -%}
  {{ return({'passed': ok, 'detail': detail}) }}
{% endmacro %}
