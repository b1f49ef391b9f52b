{#- One step of json_path_blocked: TRUE when the value at `prefix` (a list of keys, empty for the
    document itself) is present and neither an object nor a JSON null, FALSE when it is one of
    those, NULL when the prefix is absent. Each engine asks the reader its json_extract_text reads
    through. -#}
{% macro _json_step_blocked(expr, prefix) -%}
  {{ return(adapter.dispatch('_json_step_blocked', 'assay')(expr, prefix)) }}
{%- endmacro %}

{#- SQL/JSON: JSON_VALUE reads a scalar (NULL for an object, an array or null), JSON_QUERY an
    object or an array. -#}
{% macro default___json_step_blocked(expr, prefix) -%}
  {%- set value = assay._as_text(expr) -%}
  {%- set path = assay.string_literal(assay._json_path(prefix)) -%}
  (JSON_VALUE({{ value }}, {{ path }}) IS NOT NULL OR JSON_QUERY({{ value }}, {{ path }}) LIKE '[%')
{%- endmacro %}

{#- The empty JSON Pointer is the document itself. -#}
{% macro duckdb___json_step_blocked(expr, prefix) -%}
  (json_type({{ assay._as_text(expr) }}, {{ assay.string_literal(assay._json_path(prefix)) }}) NOT IN ('OBJECT', 'NULL'))
{%- endmacro %}

{#- json, as json_extract_text reads it (jsonb agrees, duplicate keys included: the last wins). -#}
{% macro postgres___json_step_blocked(expr, prefix) -%}
  {%- set keys = [] -%}
  {%- for k in prefix -%}{%- do keys.append(assay.string_literal(k)) -%}{%- endfor -%}
  {%- set doc = 'CAST(' ~ assay._as_text(expr) ~ ' AS json)' -%}
  (json_typeof({{ doc }}{% if keys %} #> ARRAY[{{ keys | join(', ') }}]::text[]{% endif %}) NOT IN ('object', 'null'))
{%- endmacro %}

{#- JSON_EXTRACT_PATH_TEXT (json_extract_text's reader) gives a string's content and an object's
    JSON alike, and '' for an absent key: text that parses as an object passes as one, so a string
    holding object text is not told from an object here (decision 1130). -#}
{% macro redshift___json_step_blocked(expr, prefix) -%}
  {%- set value = assay._as_text(expr) -%}
  {%- if prefix | length == 0 -%}
  (JSON_TYPEOF(JSON_PARSE({{ value }})) NOT IN ('object', 'null'))
  {%- else -%}
  {%- set keys = [] -%}
  {%- for k in prefix -%}{%- do keys.append(assay.string_literal(k)) -%}{%- endfor -%}
  {%- set at = 'NULLIF(JSON_EXTRACT_PATH_TEXT(' ~ value ~ ', ' ~ keys | join(', ') ~ ', true), \'\')' -%}
  (CASE WHEN {{ at }} IS NOT NULL THEN CASE WHEN CAN_JSON_PARSE({{ at }}) THEN JSON_TYPEOF(JSON_PARSE({{ at }})) ELSE 'string' END NOT IN ('object', 'null') END)
  {%- endif -%}
{%- endmacro %}

{#- TYPEOF of a variant: a JSON null is NULL_VALUE, an absent key SQL NULL. -#}
{% macro snowflake___json_step_blocked(expr, prefix) -%}
  {%- set steps = [] -%}
  {%- for k in prefix -%}{%- do steps.append('[' ~ assay.string_literal(k) ~ ']') -%}{%- endfor -%}
  (TYPEOF(TRY_PARSE_JSON({{ assay._as_text(expr) }}){{ steps | join('') }}) NOT IN ('OBJECT', 'NULL_VALUE'))
{%- endmacro %}

{% macro bigquery___json_step_blocked(expr, prefix) -%}
  (JSON_TYPE(JSON_QUERY(SAFE.PARSE_JSON({{ assay._as_text(expr) }}), {{ assay.string_literal(assay._json_path(prefix)) }})) NOT IN ('object', 'null'))
{%- endmacro %}

{#- get_json_object gives a string's content without its quotes, so `{"a":"{x"}` and `{"a":{}}`
    read alike at $.a. The document is told by its own first character (`{` an object, `n` null);
    a value inside it is read again from the document as Spark writes it back (compact JSON),
    wrapped in an array and addressed under `[*]`: under a wildcard get_json_object writes what it
    finds as JSON, a string with its quotes, so its first character tells the kind. -#}
{% macro spark___json_step_blocked(expr, prefix) -%}
  {%- set value = assay._as_text(expr) -%}
  {%- if prefix | length == 0 -%}
  (NOT {{ value }} RLIKE {{ assay.string_literal('^\\s*[{n]') }})
  {%- else -%}
  (substr(get_json_object(concat('[', get_json_object({{ value }}, '$'), ']'), {{ assay.string_literal('$[*]' ~ assay._json_path(prefix)[1:]) }}), 1, 1) <> '{')
  {%- endif -%}
{%- endmacro %}

{#- json_format writes the value at the path as JSON: its first character tells the kind. -#}
{% macro trino___json_step_blocked(expr, prefix) -%}
  (substr(json_format(json_extract({{ assay._as_text(expr) }}, {{ assay.string_literal(assay._json_path(prefix)) }})), 1, 1) NOT IN ('{', 'n'))
{%- endmacro %}
