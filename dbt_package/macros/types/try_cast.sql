{% macro try_cast(expr, assay_type) -%}
  {{ return(adapter.dispatch('try_cast', 'assay')(expr, assay_type)) }}
{%- endmacro %}

{% macro default__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})')) }}
{%- endmacro %}

{#- DuckDB reads decimal text with an exponent written out first (assay._plain_decimal_text). -#}
{% macro duckdb__try_cast(expr, assay_type) -%}
  {%- if assay._parse_type(assay_type).kind == 'decimal' -%}
    {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST(' ~ assay._plain_decimal_text('{value}') ~ ' AS {type})')) }}
  {%- endif -%}
  {{ return(assay.default__try_cast(expr, assay_type)) }}
{%- endmacro %}

{#- No TRY_CAST keyword: guard the engine's own input parser, so the accept set is the
    engine's and not a regex approximation of it. 15 lacks pg_input_is_valid and uses the
    function that install_functions() creates. -#}
{#- A timestamp's fraction of more than six digits is cut to microseconds before the cast, as
    DuckDB and Spark read it, where PostgreSQL rounds (23:59:59.9999999 became the next day;
    decision 1167). The regex runs only on text with more than six characters after its point:
    it costs about 1.3 s per million values. The validity check reads the text as it is. -#}
{% macro postgres__try_cast(expr, assay_type) -%}
  {%- if assay._postgres_version_num() >= 160000 -%}
    {%- set check = 'pg_input_is_valid({value}, {type_literal})' -%}
  {%- else -%}
    {%- set check = assay._postgres_udf_schema() ~ '.assay_input_is_valid({value}, {type_literal})' -%}
  {%- endif -%}
  {%- set cast_value = '{value}' -%}
  {%- if assay._parse_type(assay_type).kind == 'timestamp' -%}
    {%- set cast_value = "CASE WHEN length({value}) - strpos({value}, '.') > 6 AND strpos({value}, '.') > 0 "
        ~ "THEN regexp_replace({value}, '([.][0-9]{6})[0-9]+', '\\1') ELSE {value} END" -%}
  {%- endif -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'CASE WHEN ' ~ check ~ ' THEN CAST(' ~ cast_value ~ ' AS {type}) END')) }}
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

{#- Spark's casts read any Unicode digit ('١٢' is 12: Java's Character.digit); DuckDB and
    PostgreSQL read ASCII digits only, so non-ASCII text does not convert here either. -#}
{% macro spark__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'CASE WHEN octet_length({value}) = length({value}) THEN TRY_CAST({value} AS {type}) END',
      "CASE WHEN get_json_object({value}, '$') IS NOT NULL THEN {value} END")) }}
{%- endmacro %}

{% macro trino__try_cast(expr, assay_type) -%}
  {{ return(assay._guarded_cast(expr, assay_type, 'TRY_CAST({value} AS {type})', 'TRY(json_parse({value}))')) }}
{%- endmacro %}
