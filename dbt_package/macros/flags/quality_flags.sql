{% macro quality_flags(flags) -%}
  {{ return(adapter.dispatch('quality_flags', 'assay')(flags)) }}
{%- endmacro %}

{#- No array type: a comma-joined string, '' when clean. -#}
{% macro default__quality_flags(flags) -%}
  {%- set parts = [] -%}
  {%- for f in assay._checked_flags(flags) -%}
    {%- do parts.append("CASE WHEN (" ~ f[1] ~ ") THEN '," ~ f[0] ~ "' ELSE '' END") -%}
  {%- endfor -%}
  {%- if not parts -%}''{%- else -%}LTRIM({{ parts | join(' || ') }}, ','){%- endif -%}
{%- endmacro %}

{#- Redshift would otherwise inherit the Postgres array form; it has no arrays. -#}
{% macro redshift__quality_flags(flags) -%}
  {{ return(assay.default__quality_flags(flags)) }}
{%- endmacro %}

{#- flatten() of one-element / empty lists instead of list_filter: no lambda syntax, which
    DuckDB changed in 1.3. -#}
{% macro duckdb__quality_flags(flags) -%}
  {%- set parts = [] -%}
  {%- for f in assay._checked_flags(flags) -%}
    {%- do parts.append("CASE WHEN (" ~ f[1] ~ ") THEN ['" ~ f[0] ~ "'] ELSE [] END") -%}
  {%- endfor -%}
  {%- if not parts -%}CAST([] AS VARCHAR[]){%- else -%}CAST(flatten([{{ parts | join(', ') }}]) AS VARCHAR[]){%- endif -%}
{%- endmacro %}

{% macro postgres__quality_flags(flags) -%}
  {%- set cases = assay._flag_cases(flags) -%}
  {%- if not cases -%}ARRAY[]::text[]{%- else -%}array_remove(ARRAY[{{ cases | join(', ') }}]::text[], NULL){%- endif -%}
{%- endmacro %}

{% macro snowflake__quality_flags(flags) -%}
  ARRAY_COMPACT(ARRAY_CONSTRUCT({{ assay._flag_cases(flags) | join(', ') }}))
{%- endmacro %}

{% macro bigquery__quality_flags(flags) -%}
  {%- set parts = [] -%}
  {%- for f in assay._checked_flags(flags) -%}
    {%- do parts.append("IF((" ~ f[1] ~ "), ['" ~ f[0] ~ "'], ARRAY<STRING>[])") -%}
  {%- endfor -%}
  {%- if not parts -%}ARRAY<STRING>[]{%- else -%}ARRAY_CONCAT({{ parts | join(', ') }}){%- endif -%}
{%- endmacro %}

{% macro spark__quality_flags(flags) -%}
  {%- set cases = assay._flag_cases(flags) -%}
  {%- if not cases -%}CAST(array() AS ARRAY<STRING>){%- else -%}filter(array({{ cases | join(', ') }}), x -> x IS NOT NULL){%- endif -%}
{%- endmacro %}

{% macro trino__quality_flags(flags) -%}
  {%- set cases = assay._flag_cases(flags) -%}
  {%- if not cases -%}CAST(ARRAY[] AS ARRAY(varchar)){%- else -%}filter(ARRAY[{{ cases | join(', ') }}], x -> x IS NOT NULL){%- endif -%}
{%- endmacro %}
