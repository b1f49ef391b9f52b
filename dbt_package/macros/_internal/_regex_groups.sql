{#- Renumbers the capturing groups of a portable-subset pattern, for engines whose extract
    function cannot pick group N (BigQuery REGEXP_EXTRACT takes at most one group, Redshift's
    'e' flag returns the first) or that lack (?:...) (Snowflake's POSIX ERE).

    keep: the group to preserve (0 = none). With to_capturing, every (?:...) becomes a plain
    group (Snowflake) and 'group' is the new number of `keep`; otherwise every capturing group
    but `keep` becomes non-capturing and `keep` ends up group 1. -#}
{% macro _regex_groups(pattern, keep=0, to_capturing=false) %}
  {%- set chars = pattern | list -%}
  {%- set ns = namespace(out='', esc=false, in_class=false, class_start=-1, skip=0, n=0, renumbered=0, kept=none) -%}
  {%- for i in range(chars | length) -%}
    {%- set c = chars[i] -%}
    {%- if ns.skip > 0 -%}
      {%- set ns.skip = ns.skip - 1 -%}
    {%- elif ns.esc -%}
      {%- set ns.out = ns.out ~ c -%}{%- set ns.esc = false -%}
    {%- elif c == '\\' -%}
      {%- set ns.out = ns.out ~ c -%}{%- set ns.esc = true -%}
    {%- elif ns.in_class -%}
      {%- set ns.out = ns.out ~ c -%}
      {#- a ']' right after '[' or '[^' is a literal member, not the end -#}
      {%- if c == ']' and i > ns.class_start -%}{%- set ns.in_class = false -%}{%- endif -%}
    {%- elif c == '[' -%}
      {%- set ns.out = ns.out ~ c -%}{%- set ns.in_class = true -%}
      {%- set ns.class_start = i + (2 if chars[i + 1:i + 2] == ['^'] else 1) -%}
    {%- elif c == '(' and chars[i + 1:i + 3] == ['?', ':'] -%}
      {%- if to_capturing -%}
        {%- set ns.renumbered = ns.renumbered + 1 -%}
        {%- set ns.out = ns.out ~ '(' -%}{%- set ns.skip = 2 -%}
      {%- else -%}
        {%- set ns.out = ns.out ~ c -%}
      {%- endif -%}
    {%- elif c == '(' and chars[i + 1:i + 2] != ['?'] -%}
      {%- set ns.n = ns.n + 1 -%}{%- set ns.renumbered = ns.renumbered + 1 -%}
      {%- if ns.n == keep -%}{%- set ns.kept = 1 if not to_capturing else ns.renumbered -%}{%- endif -%}
      {%- set ns.out = ns.out ~ ('(' if (to_capturing or ns.n == keep) else '(?:') -%}
    {%- else -%}
      {%- set ns.out = ns.out ~ c -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if keep and ns.kept is none -%}
    {{ exceptions.raise_compiler_error("assay: pattern '" ~ pattern ~ "' has no group " ~ keep) }}
  {%- endif -%}
  {{ return({'pattern': ns.out, 'group': ns.kept or 0}) }}
{% endmacro %}
