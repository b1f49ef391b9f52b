{#- Text without what it quotes: everything from the first to the last quote of each kind, and
    every number standing alone (`_engine_message` keeps the kind of an error so). A value may
    itself hold quotes or line breaks, so runs are not matched pairwise, and a quote left unclosed
    hides the rest. The generator's privacy.quoted_hidden, the same rule
    (tests/dbt_package/test_macro_render.py). -#}
{% macro _quoted_hidden(text) %}
  {%- set state = {'out': text} -%}
  {%- for quote in ["'", '"'] -%}
    {%- set out = state['out'] -%}
    {%- set first = out.find(quote) -%}
    {%- set last = out.rfind(quote) -%}
    {%- if first != -1 -%}
      {%- set rest = out[last + 1:] if last > first else '' -%}
      {%- do state.update({'out': out[:first] ~ '(a quoted value: not shown)' ~ rest}) -%}
    {%- endif -%}
  {%- endfor -%}
  {#- a number standing alone (a value some messages give bare), as privacy.BARE_NUMBER -#}
  {{ return(modules.re.sub('(?<![A-Za-z0-9_.])[-+]?[0-9]+(?:[.][0-9]+)?(?:[eE][-+]?[0-9]+)?(?![A-Za-z0-9_])',
                           '(a number: not shown)', state['out'])) }}
{% endmacro %}
