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
    {#- RFC 7396 merge patch: a null member removes the key. Each name is a string literal, never
        text pasted into one: a SQL check file's output name is the author's (decision 0914). -#}
    {%- set pairs = [] -%}
    {%- for c in redact -%}{%- do pairs.append(assay.string_literal(c) ~ ', NULL') -%}{%- endfor -%}
    CAST(json_merge_patch(to_json({{ alias }}), json_object({{ pairs | join(', ') }})) AS {{ assay.sql_type('string') }})
  {%- endif -%}
{%- endmacro %}

{#- With a key path: the row without the redacted and rewritten members, then the rewritten ones
    that are not NULL (a column's text read from the row's JSON, as on DuckDB). -#}
{% macro postgres__row_json(alias, redact=[]) -%}
  {%- set r = assay._redact_split(redact) -%}
  {%- if r['inside'] -%}
    {%- set pairs = [] -%}
    {%- for c in r['inside'] | sort -%}{%- do pairs.append(assay.string_literal(c) ~ ', ' ~ assay.redacted_json_document('(to_jsonb(' ~ alias ~ ') ->> ' ~ assay.string_literal(c) ~ ')', r['inside'][c])) -%}{%- endfor -%}
    ((to_jsonb({{ alias }}){% for c in r['whole'] + (r['inside'] | sort) %} - {{ assay.string_literal(c) }}{% endfor %}) || jsonb_strip_nulls(jsonb_build_object({{ pairs | join(', ') }})))::text
  {%- else -%}
  (to_jsonb({{ alias }}){% for c in redact %} - {{ assay.string_literal(c) }}{% endfor %})::text
  {%- endif -%}
{%- endmacro %}

{% macro redshift__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Redshift has no row-to-JSON function; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}

{#- Null members are kept (to_json drops them by default), whatever the session's setting, and a
    timestamp keeps its microseconds (to_json's default format stops at milliseconds, which cut
    `_ingested_at` in `raw` and a kept check row's timestamps: an outside tester, session 45).
    Redacted columns: the row as a map of variants (member order kept, each value its own JSON:
    a map of strings turned a decimal(38,9) into `1.2345678901234568E17`), filtered, written
    again. A column with key paths: its member's text rewritten in the map, left out when NULL. -#}
{% macro spark__row_json(alias, redact=[]) -%}
  {#- no quoted `'T'` in the pattern: a session whose double quotes name identifiers would not
      read it; a space, as DuckDB writes a timestamp -#}
  {%- set options = "map('ignoreNullFields', 'false', 'timestampFormat', 'yyyy-MM-dd HH:mm:ss.SSSSSSXXX')" -%}
  {%- set whole = "to_json(struct(" ~ alias ~ ".*), " ~ options ~ ")" -%}
  {%- set r = assay._redact_split(redact) -%}
  {%- if redact | length == 0 -%}
    {{ whole }}
  {%- elif r['inside'] -%}
    {%- set whole_cols, inside_cols, whens = [], [], [] -%}
    {%- for c in r['whole'] -%}{%- do whole_cols.append(assay.string_literal(c)) -%}{%- endfor -%}
    {%- for c in r['inside'] | sort -%}
      {%- do inside_cols.append(assay.string_literal(c)) -%}
      {%- do whens.append('WHEN ' ~ assay.string_literal(c) ~ ' THEN CAST(' ~ assay.redacted_json_document('CAST(v AS STRING)', r['inside'][c]) ~ ' AS VARIANT)') -%}
    {%- endfor -%}
    {%- set drop = (['k IN (' ~ whole_cols | join(', ') ~ ')'] if whole_cols else []) + ['(k IN (' ~ inside_cols | join(', ') ~ ') AND v IS NULL)'] -%}
    to_json(map_filter(transform_values(from_json({{ whole }}, 'map<string,variant>'), (k, v) -> CASE k {{ whens | join(' ') }} ELSE v END), (k, v) -> NOT ({{ drop | join(' OR ') }})), {{ options }})
  {%- else -%}
    to_json(map_filter(from_json({{ whole }}, 'map<string,variant>'), (k, v) -> k NOT IN ({% for c in redact %}{{ assay.string_literal(c) }}{% if not loop.last %}, {% endif %}{% endfor %})), {{ options }})
  {%- endif -%}
{%- endmacro %}

{% macro snowflake__row_json(alias, redact=[]) -%}
  {%- do assay._refuse_redaction_inside('Snowflake', redact) -%}
  TO_JSON(OBJECT_DELETE(OBJECT_CONSTRUCT_KEEP_NULL({{ alias }}.*){% for c in redact %}, {{ assay.string_literal(c) }}{% endfor %}))
{%- endmacro %}

{% macro bigquery__row_json(alias, redact=[]) -%}
  {%- do assay._refuse_redaction_inside('BigQuery', redact) -%}
  TO_JSON_STRING((SELECT AS STRUCT {{ alias }}.*{% if redact %} EXCEPT ({% for c in redact %}{{ adapter.quote(c) }}{% if not loop.last %}, {% endif %}{% endfor %}){% endif %}))
{%- endmacro %}

{% macro trino__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Trino has no row-to-JSON of a whole row; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}
