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
  {%- set parsed = 'try_strptime(' ~ assay._as_text(expr) ~ ', ' ~ assay.string_literal(format_literal) ~ ')' -%}
  {#- a zone directive makes try_strptime return TIMESTAMPTZ -#}
  {%- if '%z' in format_literal or '%Z' in format_literal -%}
    {{ return("CAST(timezone('UTC', " ~ parsed ~ ') AS TIMESTAMP)') }}
  {%- endif -%}
  {{ return(parsed) }}
{%- endmacro %}

{% macro _parse_iso8601(expr, zone_required) %}
  {%- set s = assay._as_text(expr) -%}
  {%- set re = assay._iso8601_ts_re(zone_required) -%}
  {%- set g = {} -%}
  {%- for n in range(1, 7) -%}
    {#- NULLIF: DuckDB and Spark give '' for a group that did not take part -#}
    {%- do g.update({n: 'NULLIF(' ~ assay.regex_extract(s, re, n) ~ ", '')"}) -%}
  {%- endfor -%}
  {%- set int_type = assay.sql_type('int') -%}
  {%- set local_ts = assay.try_cast(g[1] ~ " || ' ' || COALESCE(" ~ g[2] ~ ", '00:00:00')", 'timestamp') -%}
  {%- set offset_minutes = "(CASE WHEN " ~ g[4] ~ " = '-' THEN -1 ELSE 1 END) * (CAST(COALESCE(" ~ g[5]
      ~ ", '0') AS " ~ int_type ~ ") * 60 + CAST(COALESCE(" ~ g[6] ~ ", '0') AS " ~ int_type ~ "))" -%}
  CASE WHEN {{ assay.regex_matches(s, re) }} THEN {{ dbt.dateadd('minute', '-1 * ' ~ offset_minutes, local_ts) }} END
{% endmacro %}

{#- strftime directives understood off DuckDB, as [regex, field]. Variable-width numbers
    accept one or two digits like strptime does, except next to another number where that
    would be ambiguous ('%Y%m%d'). -#}
{% macro _strftime_directives() %}
  {{ return({
    'Y': ['([0-9]{4})', '([0-9]{4})', 'year'],
    'y': ['([0-9]{2})', '([0-9]{2})', 'year2'],
    'm': ['(0?[1-9]|1[0-2])', '(0[1-9]|1[0-2])', 'month'],
    'b': ['([A-Za-z]{3})', '([A-Za-z]{3})', 'month_abbr'],
    'B': ['([A-Za-z]{3,9})', '([A-Za-z]{3,9})', 'month_name'],
    'd': ['(0?[1-9]|[12][0-9]|3[01])', '(0[1-9]|[12][0-9]|3[01])', 'day'],
    'H': ['([01]?[0-9]|2[0-3])', '([01][0-9]|2[0-3])', 'hour'],
    'M': ['([0-5]?[0-9])', '([0-5][0-9])', 'minute'],
    'S': ['([0-5]?[0-9])', '([0-5][0-9])', 'second'],
    'f': ['([0-9]{1,6})', '([0-9]{1,6})', 'fraction'],
  }) }}
{% endmacro %}

{% macro _parse_strftime(expr, format_literal) %}
  {%- set directives = assay._strftime_directives() -%}
  {%- set numeric = ['Y', 'y', 'm', 'd', 'H', 'M', 'S', 'f'] -%}
  {#- tokens: ('%', directive) or ('', literal char) -#}
  {%- set ns = namespace(pct=false) -%}
  {%- set tokens = [] -%}
  {%- for c in format_literal -%}
    {%- if ns.pct -%}
      {%- if c != '%' and c not in directives -%}
        {{ exceptions.raise_compiler_error("assay.parse_ts: %" ~ c ~ " in '" ~ format_literal ~ "' is not supported on " ~ target.type ~ " (portable: %Y %y %m %b %B %d %H %M %S %f %%)") }}
      {%- endif -%}
      {%- do tokens.append(['%', c] if c != '%' else ['', '%']) -%}
      {%- set ns.pct = false -%}
    {%- elif c == '%' -%}
      {%- set ns.pct = true -%}
    {%- else -%}
      {%- do tokens.append(['', c]) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set re = namespace(text='^', n=0) -%}
  {%- set groups = {} -%}
  {%- for tok in tokens -%}
    {%- if tok[0] == '%' -%}
      {%- set d = directives[tok[1]] -%}
      {%- set nxt = tokens[loop.index] if loop.index < tokens | length else ['', ''] -%}
      {%- set re.text = re.text ~ (d[1] if (nxt[0] == '%' and nxt[1] in numeric) else d[0]) -%}
      {%- set re.n = re.n + 1 -%}
      {%- if d[2] in groups -%}
        {{ exceptions.raise_compiler_error("assay.parse_ts: '" ~ format_literal ~ "' names a field twice") }}
      {%- endif -%}
      {%- do groups.update({d[2]: re.n}) -%}
    {%- else -%}
      {%- set re.text = re.text ~ ('\\' if tok[1] in '.^$*+?()[]{}|\\' else '') ~ tok[1] -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set re.text = re.text ~ '$' -%}
  {%- if not (('year' in groups or 'year2' in groups) and 'day' in groups
              and ('month' in groups or 'month_abbr' in groups or 'month_name' in groups)) -%}
    {{ exceptions.raise_compiler_error("assay.parse_ts: '" ~ format_literal ~ "' needs a year, a month and a day") }}
  {%- endif -%}
  {%- set s = assay._as_text(expr) -%}
  {%- set months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] -%}
  {%- set month_names = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august',
                         'september', 'october', 'november', 'december'] -%}
  {%- if 'year' in groups -%}
    {%- set year = assay._strftime_field(s, re.text, groups, 'year', 4) -%}
  {%- else -%}
    {#- strptime's pivot: 69-99 -> 19xx, 00-68 -> 20xx -#}
    {%- set y2 = assay._strftime_field(s, re.text, groups, 'year2') -%}
    {%- set year = "(CASE WHEN " ~ y2 ~ " < '69' THEN '20' ELSE '19' END || " ~ y2 ~ ")" -%}
  {%- endif -%}
  {%- if 'month' in groups -%}
    {%- set month = assay._strftime_field(s, re.text, groups, 'month') -%}
  {%- else -%}
    {%- set field = 'month_abbr' if 'month_abbr' in groups else 'month_name' -%}
    {%- set names = months if field == 'month_abbr' else month_names -%}
    {%- set cases = [] -%}
    {%- for name in names -%}
      {%- do cases.append("WHEN '" ~ name ~ "' THEN '" ~ ('%02d' | format(loop.index)) ~ "'") -%}
    {%- endfor -%}
    {%- set month = 'CASE LOWER(' ~ assay.regex_extract(s, re.text, groups[field]) ~ ') ' ~ (cases | join(' ')) ~ ' END' -%}
  {%- endif -%}
  {%- set fraction = " || '.' || " ~ assay.regex_extract(s, re.text, groups['fraction']) if 'fraction' in groups else '' -%}
  {%- set iso = year ~ " || '-' || " ~ month ~ " || '-' || " ~ assay._strftime_field(s, re.text, groups, 'day') ~ " || ' ' || " ~ assay._strftime_field(s, re.text, groups, 'hour')
      ~ " || ':' || " ~ assay._strftime_field(s, re.text, groups, 'minute') ~ " || ':' || " ~ assay._strftime_field(s, re.text, groups, 'second') ~ fraction -%}
  CASE WHEN {{ assay.regex_matches(s, re.text) }} THEN {{ assay.try_cast(iso, 'timestamp') }} END
{% endmacro %}

{#- One captured field, zero-padded for the ISO text; absent time fields are midnight. -#}
{% macro _strftime_field(s, re, groups, field, pad=2) -%}
  {%- if field in groups -%}
    LPAD({{ assay.regex_extract(s, re, groups[field]) }}, {{ pad }}, '0')
  {%- else -%}
    '00'
  {%- endif -%}
{%- endmacro %}
