{#- An engine's timestamp text in UTC as `'2026-03-01T00:51:00.5Z'`; none when it is not one. -#}
{% macro _timestamp_shown(text) %}
  {%- set found = modules.re.match('^([0-9]{4})-([0-9]{2})-([0-9]{2})(?:[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.]([0-9]+))?)?)?(?:Z|([+-][0-9]{2})(?::?([0-9]{2}))?)?$', (text | string) | trim) -%}
  {%- if found is none or (found.group(1) | int) < 1 -%}{{ return(none) }}{%- endif -%}
  {%- set g = found.group -%}
  {%- set offset = (g(8) ~ ':' ~ (g(9) or '00')) if g(8) else '' -%}
  {%- set canonical = g(1) ~ '-' ~ g(2) ~ '-' ~ g(3) ~ 'T' ~ (g(4) or '00') ~ ':' ~ (g(5) or '00') ~ ':' ~ (g(6) or '00')
      ~ '.' ~ ((g(7) or '')[:6] ~ '000000')[:6] ~ offset -%}
  {%- set when = modules.datetime.datetime.fromisoformat(canonical) -%}
  {%- if when.tzinfo is not none -%}
    {%- set when = when.astimezone(modules.pytz.utc).replace(tzinfo=none) -%}
  {%- endif -%}
  {%- set micro = ('%06d' % when.microsecond).rstrip('0') -%}
  {{ return("'" ~ when.strftime('%Y-%m-%dT%H:%M:%S') ~ ('.' ~ micro if micro else '') ~ "Z'") }}
{% endmacro %}
