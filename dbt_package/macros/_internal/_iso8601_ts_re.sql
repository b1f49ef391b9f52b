{#- Groups: 1 date, 2 time, 3 'Z', 4 offset sign, 5 offset hours, 6 offset minutes. A fraction of a
    second takes up to nine digits (what systems that write nanoseconds emit); the parse keeps six,
    cut, not rounded (decision 0983). -#}
{% macro _iso8601_ts_re(zone_required) -%}
  {%- set time_re = '((?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?)' -%}
  {%- set zone_re = '(?:(Z)|([+-])([01][0-9]|2[0-3])(?::([0-5][0-9]))?)' -%}
  {%- if zone_required -%}
    ^{{ assay._iso8601_date_re() }}[T ]{{ time_re }}{{ zone_re }}$
  {%- else -%}
    ^{{ assay._iso8601_date_re() }}(?:[T ]{{ time_re }}{{ zone_re }}?)?$
  {%- endif -%}
{%- endmacro %}
