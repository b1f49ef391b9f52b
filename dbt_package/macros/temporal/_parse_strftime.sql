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
