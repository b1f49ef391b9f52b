{#- Whether text is a JSON document the engine's own JSON reader accepts: TRUE or FALSE, NULL on
    NULL. A JSON path read guards its extraction with it (decision 1123): a value that is not
    JSON reads as NULL with a coercion marker instead of aborting the query. Each engine answers
    with the parser its json_extract_text reads through, so what the guard accepts the extraction
    can read; engines differ at the edges (DuckDB reads NaN and trailing commas, PostgreSQL does
    not; Spark's reader is Jackson's, lenient about what follows the first value). -#}
{% macro json_valid(expr) -%}
  {#- the escape of U+0000 is refused on every engine, as jsonb refuses it (decision 1123, amended in session 33) -#}
  {{ return('(' ~ adapter.dispatch('json_valid', 'assay')(expr) ~ ' AND NOT '
      ~ assay.regex_matches(assay._as_text(expr), assay._json_nul_escape_re()) ~ ')') }}
{%- endmacro %}

{#- The SQL:2016 predicate. -#}
{% macro default__json_valid(expr) -%}
  ({{ assay._as_text(expr) }} IS JSON)
{%- endmacro %}

{% macro duckdb__json_valid(expr) -%}
  json_valid({{ assay._as_text(expr) }})
{%- endmacro %}

{#- jsonb's input parser, guarded as try_cast guards every cast (15 lacks pg_input_is_valid and
    uses the function install_functions() creates). jsonb is stricter than json only in refusing
    \u0000, which json's #>> cannot return as text either. -#}
{% macro postgres__json_valid(expr) -%}
  {%- if assay._postgres_version_num() >= 160000 -%}
  pg_input_is_valid({{ assay._as_text(expr) }}, 'jsonb')
  {%- else -%}
  {{ assay._postgres_udf_schema() }}.assay_input_is_valid({{ assay._as_text(expr) }}, 'jsonb')
  {%- endif -%}
{%- endmacro %}

{% macro redshift__json_valid(expr) -%}
  CAN_JSON_PARSE({{ assay._as_text(expr) }})
{%- endmacro %}

{#- A JSON null parses to a variant null, which is not SQL NULL. -#}
{% macro snowflake__json_valid(expr) -%}
  {%- set value = assay._as_text(expr) -%}
  (CASE WHEN {{ value }} IS NOT NULL THEN TRY_PARSE_JSON({{ value }}) IS NOT NULL END)
{%- endmacro %}

{% macro bigquery__json_valid(expr) -%}
  {%- set value = assay._as_text(expr) -%}
  (CASE WHEN {{ value }} IS NOT NULL THEN SAFE.PARSE_JSON({{ value }}) IS NOT NULL END)
{%- endmacro %}

{#- get_json_object never raises: it is NULL on text it cannot read, and on the document `null`. -#}
{% macro spark__json_valid(expr) -%}
  {%- set value = assay._as_text(expr) -%}
  (CASE WHEN {{ value }} IS NOT NULL THEN get_json_object({{ value }}, '$') IS NOT NULL OR trim({{ value }}) = 'null' END)
{%- endmacro %}

{% macro trino__json_valid(expr) -%}
  {%- set value = assay._as_text(expr) -%}
  (CASE WHEN {{ value }} IS NOT NULL THEN TRY(json_parse({{ value }})) IS NOT NULL END)
{%- endmacro %}
