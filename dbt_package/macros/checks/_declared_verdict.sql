{#- Pass/fail of one check from its measured numbers, with a short sentence for the dbt error.
    Integers only (counts, microseconds), or the engine's own exact decimals: never a float. -#}
{% macro _declared_verdict(check, m, gap) %}
  {%- set b = check['bounds'] -%}
  {%- set kind = check['kind'] -%}
  {%- set col = "'" ~ check['columns'][0] ~ "'" if check['columns'] else '' -%}
  {%- set rows = m['rows'] -%}
  {%- if kind == 'row_expectation' -%}
    {%- set ok = (b.get('min_rows') is none or rows >= b['min_rows']) and (b.get('max_rows') is none or rows <= b['max_rows']) -%}
    {%- set detail = 'row count ' ~ rows ~ (' is within' if ok else ' is outside') ~ ' the declared bounds ['
        ~ b.get('min_rows', '') ~ ', ' ~ b.get('max_rows', '') ~ ']' -%}
  {%- elif kind == 'null_ceiling' -%}
    {%- set ok = rows == 0 or m['nulls'] * 1000000 <= b['max_null_ppm'] * rows -%}
    {%- set detail = 'column ' ~ col ~ ' is null on ' ~ m['nulls'] ~ ' of ' ~ rows ~ ' rows, '
        ~ ('at or below' if ok else 'above') ~ ' the declared ceiling of ' ~ b['max_null_ppm'] ~ ' ppm' -%}
  {%- elif kind == 'value_range' -%}
    {%- set range = '[' ~ b['min_value'] ~ ', ' ~ b['max_value'] ~ ']' -%}
    {%- if not check['orderable'] -%}
      {%- set ok = false -%}
      {%- set detail = 'column ' ~ col ~ ' holds values whose type is not orderable against the declared range ' ~ range -%}
    {%- else -%}
      {%- set ok = m['outside'] == 0 -%}
      {%- set detail = ('column ' ~ col ~ ' lies within ' ~ range) if ok else ('column ' ~ col ~ " holds '"
          ~ m['first'] ~ "', outside the declared range " ~ range ~ ' (' ~ m['outside'] ~ ' values outside)') -%}
    {%- endif -%}
  {%- elif kind == 'key_uniqueness' -%}
    {%- set ok = m['repeats'] == 0 -%}
    {%- set key = '(' ~ check['columns'] | join(', ') ~ ')' -%}
    {%- set detail = ('key ' ~ key ~ ' is distinct across all ' ~ rows ~ ' rows') if ok else ('key ' ~ key ~ ' repeats on '
        ~ m['repeats'] ~ ' of ' ~ rows ~ ' rows, first at (' ~ (m['key'] | map('string') | join(', ')) ~ ')') -%}
  {%- elif kind == 'continuity' -%}
    {%- set ceiling = b['max_gap_seconds'] -%}
    {%- if check['domain'] is none -%}
      {%- set ok = false -%}
      {%- set detail = 'column ' ~ col ~ ' holds values with no distance between them (not a timestamp, date or number)' -%}
    {%- elif m['distinct'] <= 1 or gap is none -%}
      {%- set ok = true -%}
      {%- set detail = 'column ' ~ col ~ ' has ' ~ m['distinct'] ~ ' distinct values, so no gap' -%}
    {%- else -%}
      {%- set ok = gap <= ceiling * check['gap_scale'] -%}
      {%- set unit = ' microseconds' if check['domain'] == 'timestamp' else (' seconds' if check['domain'] == 'date' else '') -%}
      {%- set detail = 'column ' ~ col ~ ' gaps from ' ~ m['from'] ~ ' to ' ~ m['to'] ~ ' by ' ~ m['gap'] ~ unit ~ ', '
          ~ ('at or below' if ok else 'above') ~ ' the declared ceiling of ' ~ ceiling ~ ' seconds' -%}
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
  {%- else -%}
    {{ exceptions.raise_compiler_error('assay: unknown declared check kind ' ~ kind ~ '; run `assay generate dbt` again.') }}
  {%- endif -%}
  {{ return({'passed': ok, 'detail': detail}) }}
{% endmacro %}
