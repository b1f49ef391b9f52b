{% macro try_cast(expr, assay_type) -%}
  {{ return(adapter.dispatch('try_cast', 'assay')(expr, assay_type)) }}
{%- endmacro %}

{#- Wraps an engine's NULL-on-failure cast (`template`, over the operand as text) in the
    guards every engine shares:
    - int: integer text only; engines otherwise round '12.5' or read '1_000' / '0x1F'.
    - date/timestamp: words that resolve to the clock (now, today, ...) or to sentinels
      (epoch, infinity) are refused: the same cell must not convert differently per run.
    - decimal: NaN / Infinity are not numbers a rule can compare. -#}
{% macro _guarded_cast(expr, assay_type, template, variant_template=none) %}
  {%- set t = assay._parse_type(assay_type) -%}
  {%- set value = assay._as_text(expr) -%}
  {%- if t.kind == 'string' -%}
    {{ return(value) }}
  {%- endif -%}
  {%- set type_name = assay.sql_type(assay_type) -%}
  {%- set tmpl = variant_template if (t.kind == 'variant' and variant_template) else template -%}
  {#- {value} goes in last so that text inside the operand is never substituted. -#}
  {%- set cast = tmpl | replace('{type_literal}', assay.string_literal(type_name))
                      | replace('{type}', type_name) | replace('{value}', value) -%}
  {%- if t.kind == 'int' -%}
    {%- set guard = assay.regex_matches(value, '^\\s*[+-]?[0-9]+\\s*$') -%}
  {%- elif t.kind in ['date', 'timestamp'] -%}
    {%- set guard = 'NOT ' ~ assay.regex_matches('LOWER(' ~ value ~ ')', 'now|today|tomorrow|yesterday|epoch|infinity') -%}
  {%- elif t.kind == 'decimal' -%}
    {%- set guard = 'NOT ' ~ assay.regex_matches('LOWER(' ~ value ~ ')', 'nan|inf') -%}
  {%- else -%}
    {{ return(cast) }}
  {%- endif -%}
  {{ return('CASE WHEN ' ~ guard ~ ' THEN ' ~ cast ~ ' END') }}
{% endmacro %}

{% macro default__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})')) }}
{%- endmacro %}

{#- No TRY_CAST keyword: guard the engine's own input parser, so the accept set is the
    engine's and not a regex approximation of it. 15 lacks pg_input_is_valid and uses the
    function that install_functions() creates. -#}
{% macro postgres__try_cast(expr, assay_type) -%}
  {%- if assay._postgres_version_num() >= 160000 -%}
    {%- set check = 'pg_input_is_valid({value}, {type_literal})' -%}
  {%- else -%}
    {%- set check = assay._postgres_udf_schema() ~ '.assay_input_is_valid({value}, {type_literal})' -%}
  {%- endif -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'CASE WHEN ' ~ check ~ ' THEN CAST({value} AS {type}) END')) }}
{%- endmacro %}

{#- Redshift's TRY_CAST rejects an empty string operand instead of returning NULL. -#}
{% macro redshift__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, "TRY_CAST(NULLIF({value}, '') AS {type})",
      "CASE WHEN CAN_JSON_PARSE({value}) THEN JSON_PARSE({value}) END")) }}
{%- endmacro %}

{#- Snowflake's TRY_CAST accepts string operands only, hence the VARCHAR cast in {value}. -#}
{% macro snowflake__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})', 'TRY_PARSE_JSON({value})')) }}
{%- endmacro %}

{% macro bigquery__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'SAFE_CAST({value} AS {type})',
      'CASE WHEN SAFE.PARSE_JSON({value}) IS NOT NULL THEN {value} END')) }}
{%- endmacro %}

{% macro spark__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})',
      "CASE WHEN get_json_object({value}, '$') IS NOT NULL THEN {value} END")) }}
{%- endmacro %}

{% macro trino__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})', 'TRY(json_parse({value}))')) }}
{%- endmacro %}
