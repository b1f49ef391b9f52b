{#- The text of a JSON column without the key paths, '(redacted: not JSON)' when it is not JSON
    (one dispatch per engine; the row macros below put it in place of the column's member). -#}
{% macro redacted_json_document(expr, paths) -%}
  {{ return(adapter.dispatch('redacted_json_document', 'assay')(expr, paths)) }}
{%- endmacro %}

{#- An RFC 7396 merge patch per path (a null member removes its key), applied where the key's
    parent is an object, so a missing or non-object step is left as delivered (a patch would write
    `{}` there). DuckDB reads the first of repeated keys, so a step that repeats could hide a later
    copy from that test: where a level repeats a key and holds the path's step, the patch applies
    regardless, and it merges the copies (a step absent is not added: session 44). A document
    that is no object holds no key: it is kept as delivered (a patch would replace it). -#}
{% macro default__redacted_json_document(expr, paths) -%}
  {%- set t = assay._as_text(expr) -%}
  {%- set ns = namespace(out=t) -%}
  {%- for p in paths -%}
    {%- set applies = ['json_type(' ~ t ~ (", '/" ~ p[:-1] | join('/') ~ "'" if p | length > 1 else '') ~ ") = 'OBJECT'"] -%}
    {%- for i in range(p | length) -%}
      {%- set keys = 'json_keys(' ~ t ~ (", '/" ~ p[:i] | join('/') ~ "'" if i else '') ~ ')' -%}
      {%- do applies.append('(len(' ~ keys ~ ') > len(list_distinct(' ~ keys ~ ')) and list_contains(' ~ keys ~ ', ' ~ assay.string_literal(p[i]) ~ '))') -%}
    {%- endfor -%}
    {%- set patch = assay.string_literal(tojson(assay._redact_tree([p]), sort_keys=True)) -%}
    {%- set ns.out = 'json_merge_patch(' ~ ns.out ~ ', CASE WHEN ' ~ applies | join(' OR ') ~ ' THEN ' ~ patch ~ " ELSE '{}' END)" -%}
  {%- endfor -%}
  CASE WHEN {{ assay.json_valid(expr) }} THEN CASE WHEN json_type({{ t }}) = 'OBJECT' THEN CAST({{ ns.out }} AS {{ assay.sql_type('string') }}) ELSE {{ t }} END WHEN {{ expr }} IS NOT NULL THEN '(redacted: not JSON)' END
{%- endmacro %}

{#- The object rebuilt from its members without the redacted keys (jsonb's `#-` would re-spell
    every number the mapping reads through json). A document that is no object holds no key. -#}
{% macro postgres__redacted_json_document(expr, paths) -%}
  {%- set t = assay._as_text(expr) -%}
  {%- set doc = 'CAST(' ~ t ~ ' AS json)' -%}
  CASE WHEN {{ assay.json_valid(expr) }} THEN CASE WHEN json_typeof({{ doc }}) = 'object' THEN CAST({{ assay._postgres_redacted_object(doc, assay._redact_tree(paths), 0) }} AS text) ELSE {{ t }} END WHEN {{ expr }} IS NOT NULL THEN '(redacted: not JSON)' END
{%- endmacro %}

{#- Spark has no JSON key removal: the object is rebuilt from its members. A document Spark's
    variant parser refuses (not JSON, or a repeated key) is '(redacted: not JSON)'; one that is
    no object is written again as parsed, which drops whatever followed its first value. -#}
{% macro spark__redacted_json_document(expr, paths) -%}
  {%- set t = assay._as_text(expr) -%}
  CASE WHEN {{ t }} IS NULL THEN NULL WHEN try_parse_json({{ t }}) IS NULL THEN '(redacted: not JSON)' WHEN schema_of_variant(try_parse_json({{ t }})) LIKE 'OBJECT%' THEN {{ assay._spark_redacted_object(t, assay._redact_tree(paths), 0) }} ELSE to_json(try_parse_json({{ t }})) END
{%- endmacro %}
