{#- No key removal inside a JSON column is spelt for these: refused, naming what to write instead. -#}
{% macro _refuse_redaction_inside(engine, redact) -%}
  {%- set inside = assay._redact_split(redact)['inside'] -%}
  {%- if inside -%}
    {{ exceptions.raise_compiler_error('assay.row_json: ' ~ engine ~ ' has no spelling that removes a key inside a JSON column (' ~ (inside | sort | join(', ')) ~ '); redact the whole column, or load the value into a bronze column of its own and redact that') }}
  {%- endif -%}
{%- endmacro %}
