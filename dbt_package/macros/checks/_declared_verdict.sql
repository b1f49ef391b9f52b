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
    {{ return(assay._rate_verdict(check, m)) }}
  {%- elif kind in ('quarantine_increase', 'rule_increase', 'volume_change') -%}
    {{ return(assay._increase_verdict(check, m)) }}
  {%- elif kind == 'anomaly' -%}
    {{ return(assay._anomaly_verdict(check, m)) }}
  {%- else -%}
    {{ exceptions.raise_compiler_error('assay: unknown declared check kind ' ~ kind ~ '; run `assay generate dbt` again.') }}
  {%- endif -%}
  {{ return({'passed': ok, 'detail': detail}) }}
{% endmacro %}
