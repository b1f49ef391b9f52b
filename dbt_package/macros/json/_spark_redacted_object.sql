{#- An object's members rebuilt one by one: a string re-quoted, every other value as Jackson copied
    it (the text get_json_object reads), a member on a path rewritten in turn. -#}
{% macro _spark_redacted_object(t, node, depth) -%}
  {%- set e = 'assay_e' ~ depth -%}
  {%- set removed, whens = [], [e ~ ".value IS NULL THEN 'null'"] -%}
  {%- set kind = 'schema_of_variant(from_json(' ~ t ~ ", 'map<string,variant>')[" ~ e ~ '.key])' -%}
  {%- for k in node | sort -%}
    {%- if node[k] is none -%}{%- do removed.append(assay.string_literal(k)) -%}
    {%- else -%}{%- do whens.append(e ~ '.key = ' ~ assay.string_literal(k) ~ ' AND ' ~ kind ~ " LIKE 'OBJECT%' THEN " ~ assay._spark_redacted_object(e ~ '.value', node[k], depth + 1)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- do whens.append(kind ~ " = 'STRING' THEN trim(BOTH '[]' FROM to_json(array(" ~ e ~ '.value)))') -%}
  {%- set entries = 'map_entries(from_json(' ~ t ~ ", 'map<string,string>'))" -%}
  {%- if removed -%}{%- set entries = 'filter(' ~ entries ~ ', ' ~ e ~ ' -> NOT ' ~ e ~ '.key IN (' ~ removed | join(', ') ~ '))' -%}{%- endif -%}
  concat('{', array_join(transform({{ entries }}, {{ e }} -> concat(trim(BOTH '[]' FROM to_json(array({{ e }}.key))), ':', CASE WHEN {{ whens | join(' WHEN ') }} ELSE {{ e }}.value END)), ','), '}')
{%- endmacro %}
