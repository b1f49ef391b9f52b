{#- The object's members in document order, as json (not jsonb) keeps their text: a number reads
    as delivered (`1E2`, not jsonb's `100`) and repeated keys stay (json reads the last). -#}
{% macro _postgres_redacted_object(t, node, depth) -%}
  {%- set e = 'assay_e' ~ depth -%}
  {%- set removed, whens = [], [] -%}
  {%- for k in node | sort -%}
    {%- if node[k] is none -%}{%- do removed.append(assay.string_literal(k)) -%}
    {%- else -%}{%- do whens.append('WHEN ' ~ e ~ '.key = ' ~ assay.string_literal(k) ~ ' AND json_typeof(' ~ e ~ ".value) = 'object' THEN " ~ assay._postgres_redacted_object(e ~ '.value', node[k], depth + 1)) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- set value = ('CASE ' ~ whens | join(' ') ~ ' ELSE ' ~ e ~ '.value END') if whens else e ~ '.value' -%}
  COALESCE((SELECT json_object_agg({{ e }}.key, {{ value }} ORDER BY {{ e }}.ordinality) FROM json_each({{ t }}) WITH ORDINALITY AS {{ e }}(key, value, ordinality){% if removed %} WHERE NOT {{ e }}.key IN ({{ removed | join(', ') }}){% endif %}), CAST('{}' AS json))
{%- endmacro %}
