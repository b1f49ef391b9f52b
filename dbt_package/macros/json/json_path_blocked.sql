{#- Whether a path read of `path` (a list of keys, at least one) inside a readable JSON document
    is stopped by the document's shape (decision 1130): TRUE when the document itself, or the
    value at some proper prefix of the path, is present and neither an object nor a JSON null (a
    string, a number, a boolean or an array, where the next step expects an object key); FALSE
    otherwise, a missing key or a JSON null included (absence, which only not_null judges), and
    on SQL NULL. The value at the whole path is not asked: the field's own cast judges it.
    Defined on a document json_valid accepts; a generated model asks it only then. -#}
{% macro json_path_blocked(expr, path) -%}
  {{ return(adapter.dispatch('json_path_blocked', 'assay')(expr, path)) }}
{%- endmacro %}

{#- Every engine: one step per proper prefix (the document, then each key but the last), each
    spelled by the engine (_json_step_blocked). -#}
{% macro default__json_path_blocked(expr, path) -%}
  {%- set steps = [] -%}
  {%- for i in range(path | length) -%}{%- do steps.append(assay._json_step_blocked(expr, path[:i])) -%}{%- endfor -%}
  COALESCE({{ steps | join(' OR ') if steps else 'FALSE' }}, FALSE)
{%- endmacro %}
