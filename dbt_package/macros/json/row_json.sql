{#
  The whole bronze row as JSON text, without the redacted columns: the `raw`
  payload of a reject row. It reads every column the relation has, not only
  the ones a mapping names, so a replay after a spec change still finds a
  column nobody mapped before.

  alias: the table alias of the bronze relation; redact: dotted paths relative to
  `$.` (decision 0943): `phone` drops the column, `payload.ssn` removes the key
  `ssn` from the JSON document column `payload` holds. A value of such a column
  that is not JSON the engine reads cannot be rewritten and may hold the
  secret: `raw` keeps '(redacted: not JSON)' in its place, text that is not
  JSON either, so replay judges the row as the build did (decision 1123). A
  NULL leaves the member out. Every spelling leaves each
  path no field reads (validation refuses one that intersects a redaction)
  reading the same text, so replay re-runs the mapping on what the build judged.
  The SQLMesh macros spell the same table (assay_sqlmesh/redact_json.py).
#}
{% macro row_json(alias, redact=[]) -%}
  {{ return(adapter.dispatch('row_json', 'assay')(alias, redact)) }}
{%- endmacro %}

{#- {'whole': [columns], 'inside': {column: [key paths]}} of a redact list. -#}
{% macro _redact_split(redact) -%}
  {%- set whole, inside = [], {} -%}
  {%- for entry in redact | sort -%}
    {%- set parts = entry.split('.') -%}
    {%- if parts | length == 1 -%}{%- do whole.append(entry) -%}
    {%- else -%}{%- do inside.setdefault(parts[0], []).append(parts[1:]) -%}{%- endif -%}
  {%- endfor -%}
  {{ return({'whole': whole, 'inside': inside}) }}
{%- endmacro %}

{#- {'a': {'ssn': none}}: none removes the key, a dict descends into it. -#}
{% macro _redact_tree(paths) -%}
  {%- set tree = {} -%}
  {%- for p in paths -%}
    {%- set node = namespace(d=tree) -%}
    {%- for k in p[:-1] -%}{%- do node.d.setdefault(k, {}) -%}{%- set node.d = node.d[k] -%}{%- endfor -%}
    {%- do node.d.update({p[-1]: none}) -%}
  {%- endfor -%}
  {{ return(tree) }}
{%- endmacro %}

{#- The text of a JSON column without the key paths, '(redacted: not JSON)' when it is not JSON
    (one dispatch per engine; the row macros below put it in place of the column's member). -#}
{% macro redacted_json_document(expr, paths) -%}
  {{ return(adapter.dispatch('redacted_json_document', 'assay')(expr, paths)) }}
{%- endmacro %}

{#- An RFC 7396 merge patch per path (a null member removes its key), applied where the key's
    parent is an object, so a missing or non-object step is left as delivered (a patch would write
    `{}` there). DuckDB reads the first of repeated keys, so a step that repeats could hide a later
    copy from that test: there the patch applies regardless, and it merges the copies. A document
    that is no object holds no key: it is kept as delivered (a patch would replace it). -#}
{% macro default__redacted_json_document(expr, paths) -%}
  {%- set t = assay._as_text(expr) -%}
  {%- set ns = namespace(out=t) -%}
  {%- for p in paths -%}
    {%- set applies = ['json_type(' ~ t ~ (", '/" ~ p[:-1] | join('/') ~ "'" if p | length > 1 else '') ~ ") = 'OBJECT'"] -%}
    {%- for i in range(p | length) -%}
      {%- set keys = 'json_keys(' ~ t ~ (", '/" ~ p[:i] | join('/') ~ "'" if i else '') ~ ')' -%}
      {%- do applies.append('len(' ~ keys ~ ') > len(list_distinct(' ~ keys ~ '))') -%}
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

{#- Spark has no JSON key removal: the object is rebuilt from its members. A document Spark's
    variant parser refuses (not JSON, or a repeated key) is '(redacted: not JSON)'; one that is
    no object is written again as parsed, which drops whatever followed its first value. -#}
{% macro spark__redacted_json_document(expr, paths) -%}
  {%- set t = assay._as_text(expr) -%}
  CASE WHEN {{ t }} IS NULL THEN NULL WHEN try_parse_json({{ t }}) IS NULL THEN '(redacted: not JSON)' WHEN schema_of_variant(try_parse_json({{ t }})) LIKE 'OBJECT%' THEN {{ assay._spark_redacted_object(t, assay._redact_tree(paths), 0) }} ELSE to_json(try_parse_json({{ t }})) END
{%- endmacro %}

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

{% macro default__row_json(alias, redact=[]) -%}
  {%- set r = assay._redact_split(redact) -%}
  {%- if r['inside'] -%}
    {#- The row patched: a redacted member removed, a rewritten one replaced (NULL removes it). A
        column's text is read from the row's JSON, not named: an entity's mappings read relations
        of their own, and one may not have the column. -#}
    {%- set pairs = [] -%}
    {%- for c in r['whole'] -%}{%- do pairs.append(assay.string_literal(c) ~ ', NULL') -%}{%- endfor -%}
    {%- for c in r['inside'] | sort -%}{%- do pairs.append(assay.string_literal(c) ~ ', ' ~ assay.redacted_json_document('json_extract_string(to_json(' ~ alias ~ '), ' ~ assay.string_literal('/' ~ c) ~ ')', r['inside'][c])) -%}{%- endfor -%}
    CAST(json_merge_patch(to_json({{ alias }}), json_object({{ pairs | join(', ') }})) AS {{ assay.sql_type('string') }})
  {%- elif redact | length == 0 -%}
    CAST(to_json({{ alias }}) AS {{ assay.sql_type('string') }})
  {%- else -%}
    {#- RFC 7396 merge patch: a null member removes the key. -#}
    CAST(json_merge_patch(to_json({{ alias }}), '{ {%- for c in redact -%}"{{ c }}": null{%- if not loop.last -%}, {% endif -%}{%- endfor -%} }') AS {{ assay.sql_type('string') }})
  {%- endif -%}
{%- endmacro %}

{#- With a key path: the row without the redacted and rewritten members, then the rewritten ones
    that are not NULL (a column's text read from the row's JSON, as on DuckDB). -#}
{% macro postgres__row_json(alias, redact=[]) -%}
  {%- set r = assay._redact_split(redact) -%}
  {%- if r['inside'] -%}
    {%- set pairs = [] -%}
    {%- for c in r['inside'] | sort -%}{%- do pairs.append(assay.string_literal(c) ~ ', ' ~ assay.redacted_json_document('(to_jsonb(' ~ alias ~ ') ->> ' ~ assay.string_literal(c) ~ ')', r['inside'][c])) -%}{%- endfor -%}
    ((to_jsonb({{ alias }}){% for c in r['whole'] + (r['inside'] | sort) %} - '{{ c }}'{% endfor %}) || jsonb_strip_nulls(jsonb_build_object({{ pairs | join(', ') }})))::text
  {%- else -%}
  (to_jsonb({{ alias }}){% for c in redact %} - '{{ c }}'{% endfor %})::text
  {%- endif -%}
{%- endmacro %}

{% macro redshift__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Redshift has no row-to-JSON function; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}

{#- Null members are kept (to_json drops them by default), whatever the session's setting.
    Redacted columns: the row as a map (member order kept), filtered, written again; a
    non-text bronze value then reads as text ("5"), bronze being text this is the same JSON.
    A column with key paths: its member's text rewritten in the map, left out when NULL. -#}
{% macro spark__row_json(alias, redact=[]) -%}
  {%- set whole = "to_json(struct(" ~ alias ~ ".*), map('ignoreNullFields', 'false'))" -%}
  {%- set r = assay._redact_split(redact) -%}
  {%- if redact | length == 0 -%}
    {{ whole }}
  {%- elif r['inside'] -%}
    {%- set whole_cols, inside_cols, whens = [], [], [] -%}
    {%- for c in r['whole'] -%}{%- do whole_cols.append(assay.string_literal(c)) -%}{%- endfor -%}
    {%- for c in r['inside'] | sort -%}
      {%- do inside_cols.append(assay.string_literal(c)) -%}
      {%- do whens.append('WHEN ' ~ assay.string_literal(c) ~ ' THEN ' ~ assay.redacted_json_document('v', r['inside'][c])) -%}
    {%- endfor -%}
    {%- set drop = (['k IN (' ~ whole_cols | join(', ') ~ ')'] if whole_cols else []) + ['(k IN (' ~ inside_cols | join(', ') ~ ') AND v IS NULL)'] -%}
    to_json(map_filter(transform_values(from_json({{ whole }}, 'map<string,string>'), (k, v) -> CASE k {{ whens | join(' ') }} ELSE v END), (k, v) -> NOT ({{ drop | join(' OR ') }})), map('ignoreNullFields', 'false'))
  {%- else -%}
    to_json(map_filter(from_json({{ whole }}, 'map<string,string>'), (k, v) -> k NOT IN ({% for c in redact %}{{ assay.string_literal(c) }}{% if not loop.last %}, {% endif %}{% endfor %})), map('ignoreNullFields', 'false'))
  {%- endif -%}
{%- endmacro %}

{#- No key removal inside a JSON column is spelt for these: refused, naming what to write instead. -#}
{% macro _refuse_redaction_inside(engine, redact) -%}
  {%- set inside = assay._redact_split(redact)['inside'] -%}
  {%- if inside -%}
    {{ exceptions.raise_compiler_error('assay.row_json: ' ~ engine ~ ' has no spelling that removes a key inside a JSON column (' ~ (inside | sort | join(', ')) ~ '); redact the whole column, or load the value into a bronze column of its own and redact that') }}
  {%- endif -%}
{%- endmacro %}

{% macro snowflake__row_json(alias, redact=[]) -%}
  {%- do assay._refuse_redaction_inside('Snowflake', redact) -%}
  TO_JSON(OBJECT_DELETE(OBJECT_CONSTRUCT_KEEP_NULL({{ alias }}.*){% for c in redact %}, '{{ c }}'{% endfor %}))
{%- endmacro %}

{% macro bigquery__row_json(alias, redact=[]) -%}
  {%- do assay._refuse_redaction_inside('BigQuery', redact) -%}
  TO_JSON_STRING((SELECT AS STRUCT {{ alias }}.*{% if redact %} EXCEPT ({{ redact | join(', ') }}){% endif %}))
{%- endmacro %}

{% macro trino__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Trino has no row-to-JSON of a whole row; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}
