{#- Wraps an engine's NULL-on-failure cast (`template`, over the operand as text) in the
    guards every engine shares:
    - bool: one list of words, whatever the engine's cast reads (decision 0962).
    - int: integer text only; engines otherwise round '12.5' or read '1_000' / '0x1F'.
    - date/timestamp: words that resolve to the clock (now, today, ...) or to sentinels
      (epoch, infinity) are refused: the same cell must not convert differently per run.
    - variant: not the JSON escape of U+0000, which PostgreSQL's jsonb refuses (decision 1123, amended in session 33).
    - decimal: decimal text only (digits, one optional point, an optional exponent: docs/spec.md,
      "Transforms"; decision 1125). NaN / Infinity are not numbers a rule can compare, and
      PostgreSQL 16+ reads '0x10', '0b101', '0o17' and '1_000', DuckDB '1_000', where
      PostgreSQL 15 and Spark read none of them. The exponent has at most three digits: PostgreSQL
      raises (not a NULL) on `1e-20000` although pg_input_is_valid accepts it, DuckDB refuses
      `0e999999` that PostgreSQL reads (decision 1125, amended in session 33). -#}
{% macro _guarded_cast(expr, assay_type, template, variant_template=none) %}
  {%- set t = assay._parse_type(assay_type) -%}
  {%- set value = assay._as_text(expr) -%}
  {%- if t.kind == 'string' -%}
    {{ return(value) }}
  {%- endif -%}
  {%- set type_name = assay.sql_type(assay_type) -%}
  {%- set tmpl = variant_template if (t.kind == 'variant' and variant_template) else template -%}
  {#- A date or timestamp is cast with the spaces around it trimmed (decision 0978, amended in
      session 38: DuckDB refused ' 2026-03-01 ', PostgreSQL and Spark read it). -#}
  {%- set operand = 'TRIM(' ~ value ~ ')' if t.kind in ['date', 'timestamp'] else value -%}
  {#- {value} goes in last so that text inside the operand is never substituted. -#}
  {%- set cast = tmpl | replace('{type_literal}', assay.string_literal(type_name))
                      | replace('{type}', type_name) | replace('{value}', operand) -%}
  {%- if t.kind == 'bool' -%}
    {#- One word list on every engine (decision 0962), read without the engine's cast: DuckDB
        refuses 'on', 'off' and white space around the word, PostgreSQL reads them and prefixes
        ('tr'), Spark reads neither 'on' nor a prefix. ASCII white space only, \x0b and not \v (Java reads \v as a class of line breaks). -#}
    {%- set word = 'LOWER(' ~ value ~ ')' -%}
    {{ return('CASE WHEN ' ~ assay.regex_matches(word, '^[ \\t\\n\\x0b\\f\\r]*(true|t|yes|y|on|1)[ \\t\\n\\x0b\\f\\r]*$')
        ~ ' THEN TRUE WHEN ' ~ assay.regex_matches(word, '^[ \\t\\n\\x0b\\f\\r]*(false|f|no|n|off|0)[ \\t\\n\\x0b\\f\\r]*$') ~ ' THEN FALSE END') }}
  {%- endif -%}
  {%- if t.kind == 'int' -%}
    {%- set guard = assay.regex_matches(value, '^\\s*[+-]?[0-9]+\\s*$') -%}
  {%- elif t.kind in ['date', 'timestamp'] -%}
    {#- A whole year-month-day first, no year 0000 nor a clock past 23:59:59 (0967), and no zone
        name (decision 0978): Spark reads '2026-03' as
        March 1st and converts 'Europe/Paris', PostgreSQL reads '01/02/2025' by its DateStyle
        setting and drops a zone name, DuckDB refuses all three. -#}
    {#- Spaces around it trimmed, any other white space refused; letters upper case but for a
        `utc` suffix (PostgreSQL reads a lower-case `t` and `z`, DuckDB and Spark do not). A
        separator after the date is followed by at least hours and minutes (decision 1167:
        DuckDB read '2026-03-01T' and '2026-03-01T10' as dates, PostgreSQL refuses them). -#}
    {#- A word that resolves to the clock (now, today, epoch, infinity, ...) is refused by the
        letter guard below (each has a letter other than T, Z and UTC's), so it costs no regex of
        its own; nor does the separator with no time after it, one more branch of the range regex;
        and the zone-name, lower-case and white-space tests are one regex: once `UTC` and `utc`
        are taken out, only an upper-case T or Z may be left, and no white space but a space (TRIM
        takes spaces off the ends only; each regex is 0.3-1.6 s per million values on PostgreSQL;
        session 49). -#}
    {%- set guard = assay.regex_matches(operand, '^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([^0-9]|$)')
        ~ ' AND NOT ' ~ assay.regex_matches(operand, '^(0000-|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[T ]+(([0-9]{3,}|2[4-9]|[3-9][0-9])|[0-9]{1,2}:([0-9]{3,}|[6-9][0-9])|[0-9]{1,2}:[0-9]{1,2}:([0-9]{3,}|[6-9][0-9])|[0-9]*$))')
        ~ ' AND NOT ' ~ assay.regex_matches("REPLACE(REPLACE(" ~ operand ~ ", 'UTC', ''), 'utc', '')", '[a-zA-SU-Y\\t\\n\\x0b\\f\\r]') -%}
  {%- elif t.kind == 'variant' -%}
    {%- set guard = 'NOT ' ~ assay.regex_matches(value, assay._json_nul_escape_re()) -%}
  {%- elif t.kind == 'decimal' -%}
    {%- set guard = assay.regex_matches(value, '^\\s*[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]{1,3})?\\s*$') -%}
  {%- else -%}
    {{ return(cast) }}
  {%- endif -%}
  {{ return('CASE WHEN ' ~ guard ~ ' THEN ' ~ cast ~ ' END') }}
{% endmacro %}
