{% macro parse_ts(expr, format_literal) -%}
  {{ return(adapter.dispatch('parse_ts', 'assay')(expr, format_literal)) }}
{%- endmacro %}

{#- Portable on any engine that has regex_extract and try_cast: the value is validated and
    picked apart by a regex, then goes through the guarded cast, so nothing here can raise. -#}
{% macro default__parse_ts(expr, format_literal) -%}
  {%- if format_literal in ['ISO8601', 'ISO8601_INSTANT'] -%}
    {{ return(assay._parse_iso8601(expr, format_literal == 'ISO8601_INSTANT')) }}
  {%- endif -%}
  {{ return(assay._parse_strftime(expr, format_literal)) }}
{%- endmacro %}

{#- DuckDB's own timestamp parser is strict about the calendar (2025-02-30 and 23:59:60 do
    not convert); the regex only pins the ISO shape. An offset is applied with arithmetic on
    the local time rather than through TIMESTAMPTZ, whose ICU conversion costs more than the
    rest of the parse: this is the hot path of a build (`_ingested_at` on every row). -#}
{% macro duckdb__parse_ts(expr, format_literal) -%}
  {%- if format_literal in ['ISO8601', 'ISO8601_INSTANT'] -%}
    {%- set s = assay._as_text(expr) -%}
    {%- set re = assay._iso8601_ts_re(format_literal == 'ISO8601_INSTANT') -%}
    {#- the offset, if any: '+HH', '+HHMM' or '+HH:MM' at the end; 'Z' needs no arithmetic -#}
    {%- set off = "'([+-][0-9]{2})(?::?([0-9]{2}))?$'" -%}
    {%- set hours = "CAST(regexp_extract(" ~ s ~ ", " ~ off ~ ", 1) AS INTEGER)" -%}
    {%- set minutes = "COALESCE(TRY_CAST(NULLIF(regexp_extract(" ~ s ~ ", " ~ off ~ ", 2), '') AS INTEGER), 0)" -%}
    {%- set local = "TRY_CAST(regexp_replace(" ~ s ~ ", '(Z|[+-][0-9]{2}(:?[0-9]{2})?)$', '') AS TIMESTAMP)" -%}
    {{ return("CASE WHEN regexp_full_match(" ~ s ~ ", " ~ assay.string_literal(re[1:-1]) ~ ") THEN "
        ~ "CASE WHEN length(" ~ s ~ ") > 16 AND (contains(substr(" ~ s ~ ", 11), '+') OR contains(substr(" ~ s ~ ", 11), '-')) "
        ~ "THEN " ~ local ~ " - to_minutes(" ~ hours ~ " * 60 + sign(" ~ hours ~ " * 2 + (CASE WHEN contains(substr(" ~ s ~ ", 11), '-') THEN -1 ELSE 1 END)) * " ~ minutes ~ ") "
        ~ "ELSE TRY_CAST(CASE WHEN ends_with(" ~ s ~ ", 'Z') THEN left(" ~ s ~ ", -1) ELSE " ~ s ~ " END AS TIMESTAMP) END END") }}
  {%- endif -%}
  {#- A portable format is read by the regex every engine reads it by: DuckDB's strptime is
      laxer (spaces around the value, year 0, '24' for %Y; decision 0961). It stays for a
      directive only DuckDB reads (decision 1126). -#}
  {%- set ns = namespace(pct=false, portable=true) -%}
  {%- set directives = assay._strftime_directives() -%}
  {%- for c in format_literal -%}
    {%- if ns.pct -%}
      {%- set ns.portable = ns.portable and (c == '%' or c in directives) -%}
      {%- set ns.pct = false -%}
    {%- elif c == '%' -%}
      {%- set ns.pct = true -%}
    {%- endif -%}
  {%- endfor -%}
  {#- the regex needs a whole date; a format without one stays DuckDB's, as before -#}
  {%- set dated = ('%Y' in format_literal or '%y' in format_literal) and '%d' in format_literal
                  and ('%m' in format_literal or '%b' in format_literal or '%B' in format_literal) -%}
  {%- if ns.portable and not ns.pct and dated -%}
    {{ return(assay._parse_strftime(expr, format_literal)) }}
  {%- endif -%}
  {%- set parsed = 'try_strptime(' ~ assay._as_text(expr) ~ ', ' ~ assay.string_literal(format_literal) ~ ')' -%}
  {#- a zone directive makes try_strptime return TIMESTAMPTZ -#}
  {%- if '%z' in format_literal or '%Z' in format_literal -%}
    {{ return("CAST(timezone('UTC', " ~ parsed ~ ') AS TIMESTAMP)') }}
  {%- endif -%}
  {{ return(parsed) }}
{%- endmacro %}
