{% macro json_object(pairs) -%}
  {{ return(adapter.dispatch('json_object', 'assay')(pairs)) }}
{%- endmacro %}

{% macro default__json_object(pairs) -%}
  {%- set args = [] -%}
  {%- for p in pairs -%}
    {%- do args.append(assay.string_literal(p[0]) ~ ', ' ~ p[1]) -%}
  {%- endfor -%}
  CAST(json_object({{ args | join(', ') }}) AS {{ assay.sql_type('string') }})
{%- endmacro %}

{#- Hand-assembled rather than json_build_object: that one caps at 50 pairs (100 function
    arguments) and prints '"k" : v'; this gives the compact text DuckDB gives. -#}
{% macro postgres__json_object(pairs) -%}
  {%- set parts = [] -%}
  {%- for p in pairs -%}
    {%- do parts.append(assay.string_literal((p[0] | string | tojson) ~ ':') ~ " || COALESCE(to_json(" ~ p[1] ~ ")::text, 'null')") -%}
  {%- endfor -%}
  ('{' || {{ parts | join(" || ',' || ") if parts else "''" }} || '}')
{%- endmacro %}

{% macro redshift__json_object(pairs) -%}
  {%- set args = [] -%}
  {%- for p in pairs -%}
    {%- do args.append(assay.string_literal(p[0]) ~ ', ' ~ p[1]) -%}
  {%- endfor -%}
  JSON_SERIALIZE(OBJECT({{ args | join(', ') }}))
{%- endmacro %}

{#- Snowflake objects do not keep key order. -#}
{% macro snowflake__json_object(pairs) -%}
  {%- set args = [] -%}
  {%- for p in pairs -%}
    {%- do args.append(assay.string_literal(p[0]) ~ ', ' ~ p[1]) -%}
  {%- endfor -%}
  TO_JSON(OBJECT_CONSTRUCT_KEEP_NULL({{ args | join(', ') }}))
{%- endmacro %}

{#- A STRUCT keeps field order and writes NULL as null; keys must be valid field names. -#}
{% macro bigquery__json_object(pairs) -%}
  {%- set fields = [] -%}
  {%- for p in pairs -%}
    {%- do fields.append(p[1] ~ ' AS `' ~ p[0] ~ '`') -%}
  {%- endfor -%}
  TO_JSON_STRING(STRUCT({{ fields | join(', ') }}))
{%- endmacro %}

{#- to_json drops NULL fields unless told not to. -#}
{% macro spark__json_object(pairs) -%}
  {%- set args = [] -%}
  {%- for p in pairs -%}
    {%- do args.append(assay.string_literal(p[0]) ~ ', ' ~ p[1]) -%}
  {%- endfor -%}
  to_json(named_struct({{ args | join(', ') }}), map('ignoreNullFields', 'false'))
{%- endmacro %}

{% macro trino__json_object(pairs) -%}
  {%- set args = [] -%}
  {%- for p in pairs -%}
    {%- do args.append(assay.string_literal(p[0]) ~ ' VALUE ' ~ p[1]) -%}
  {%- endfor -%}
  json_object({{ args | join(', ') }} NULL ON NULL)
{%- endmacro %}
