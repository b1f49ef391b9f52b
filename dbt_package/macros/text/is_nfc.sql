{% macro is_nfc(expr) -%}
  {{ return(adapter.dispatch('is_nfc', 'assay')(expr)) }}
{%- endmacro %}

{#- Snowflake, Spark/Databricks and Redshift ship no Unicode normalization function; failing
    at compile time beats a rule that silently never fires. -#}
{% macro default__is_nfc(expr) -%}
  {{ exceptions.raise_compiler_error("assay.is_nfc: " ~ target.type ~ " has no Unicode normalization function") }}
{%- endmacro %}

{% macro duckdb__is_nfc(expr) -%}
  (nfc_normalize({{ expr }}) = {{ expr }})
{%- endmacro %}

{#- Needs a UTF8 database (Postgres 13+). -#}
{% macro postgres__is_nfc(expr) -%}
  ({{ expr }} IS NFC NORMALIZED)
{%- endmacro %}

{% macro redshift__is_nfc(expr) -%}
  {{ return(assay.default__is_nfc(expr)) }}
{%- endmacro %}

{% macro bigquery__is_nfc(expr) -%}
  (NORMALIZE({{ expr }}, NFC) = {{ expr }})
{%- endmacro %}

{% macro trino__is_nfc(expr) -%}
  (normalize({{ expr }}, NFC) = {{ expr }})
{%- endmacro %}

{#- Spark SQL has no normalize(); ICU4J ships with Spark 4 (its collations use it), and
    reflect() calls its static NFC composer. It throws on NULL, hence the guard. -#}
{% macro spark__is_nfc(expr) -%}
  (CASE WHEN {{ expr }} IS NULL THEN NULL ELSE reflect('com.ibm.icu.text.Normalizer', 'compose', {{ expr }}, false) = {{ expr }} END)
{%- endmacro %}
