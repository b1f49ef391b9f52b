{#- An engine's error message as a SQL check's result records it for a spec with pii fields or
    redactions: only the kind of error (the words before the first colon of its first line, or
    Spark's error class) and a sentence saying the rest is withheld, since an engine gives a refused
    value quoted, bare or on a line of its own under a caret (decision 1145). A message without a
    colon keeps its words without what it quotes (`_quoted_hidden`). The generator's
    privacy.engine_message, the same rule (tests/dbt_package/test_macro_render.py). -#}
{% macro _engine_message(text) %}
  {%- set lines = [] -%}
  {%- for line in text.splitlines() if line.strip() -%}
    {%- do lines.append(line.strip()) -%}
  {%- endfor -%}
  {%- if not lines -%}{{ return(text) }}{%- endif -%}
  {%- set first = lines[0] -%}
  {%- set spark = modules.re.match('\\[([A-Z][A-Z0-9_.]*)\\]', first) -%}
  {%- if spark -%}
    {%- set head, cut = spark.group(1), true -%}
  {%- elif ':' in first -%}
    {%- set head, cut = first[:first.index(':')].strip(), true -%}
  {%- else -%}
    {%- set head, cut = first, (lines | length) > 1 -%}
  {%- endif -%}
  {%- set head = assay._quoted_hidden(head) -%}
  {%- if not cut -%}{{ return(head) }}{%- endif -%}
  {%- set withheld = "the rest of the engine's message is withheld: it may give a pii or redacted value" -%}
  {{ return(head ~ ' (' ~ withheld ~ ')' if head else withheld[0] | upper ~ withheld[1:]) }}
{% endmacro %}
