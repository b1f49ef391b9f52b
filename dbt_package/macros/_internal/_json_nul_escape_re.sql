{#- The JSON escape of U+0000 (`\u0000` after an even run of backslashes, so not the text
    `\\u0000`). PostgreSQL's jsonb refuses a document holding it (text cannot hold U+0000);
    DuckDB and Spark read it. So no engine reads it: a document with it is not JSON (decision
    1123, amended in session 33), as a variant value and in a path read. -#}
{% macro _json_nul_escape_re() -%}
  (^|[^\\])(\\\\)*\\u0000
{%- endmacro %}
