{% macro regex_matches(expr, pattern_literal) -%}
  {{ return(adapter.dispatch('regex_matches', 'assay')(expr, pattern_literal)) }}
{%- endmacro %}

{#- Every form is a substring search: anchors are the pattern's business. -#}
{% macro default__regex_matches(expr, pattern_literal) -%}
  regexp_like({{ expr }}, {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}

{#- RE2. -#}
{% macro duckdb__regex_matches(expr, pattern_literal) -%}
  regexp_matches({{ expr }}, {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}

{#- POSIX ARE. -#}
{% macro postgres__regex_matches(expr, pattern_literal) -%}
  ({{ expr }} ~ {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}

{#- 'p' selects PCRE: Redshift's POSIX dialect has no (?:...). -#}
{% macro redshift__regex_matches(expr, pattern_literal) -%}
  (REGEXP_INSTR({{ expr }}, {{ assay.string_literal(pattern_literal) }}, 1, 1, 0, 'p') > 0)
{%- endmacro %}

{#- REGEXP_LIKE / RLIKE anchor the whole value on Snowflake; REGEXP_INSTR searches. POSIX ERE
    lacks (?:...), and turning those into plain groups does not change what matches. -#}
{% macro snowflake__regex_matches(expr, pattern_literal) -%}
  {%- set rewritten = assay._regex_groups(pattern_literal, 0, true) -%}
  (REGEXP_INSTR({{ expr }}, {{ assay.string_literal(rewritten.pattern) }}) > 0)
{%- endmacro %}

{% macro bigquery__regex_matches(expr, pattern_literal) -%}
  REGEXP_CONTAINS({{ expr }}, {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}

{% macro spark__regex_matches(expr, pattern_literal) -%}
  ({{ expr }} RLIKE {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}

{% macro trino__regex_matches(expr, pattern_literal) -%}
  regexp_like({{ expr }}, {{ assay.string_literal(pattern_literal) }})
{%- endmacro %}
