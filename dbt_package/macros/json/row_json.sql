{#
  The whole bronze row as JSON text, without the redacted columns: the `raw`
  payload of a reject row. It reads every column the relation has, not only
  the ones a mapping names, so a replay after a spec change still finds a
  column nobody mapped before.

  alias: the table alias of the bronze relation; redact: column names to drop.
#}
{% macro row_json(alias, redact=[]) -%}
  {{ return(adapter.dispatch('row_json', 'assay')(alias, redact)) }}
{%- endmacro %}

{% macro default__row_json(alias, redact=[]) -%}
  {%- if redact | length == 0 -%}
    CAST(to_json({{ alias }}) AS {{ assay.sql_type('string') }})
  {%- else -%}
    {#- RFC 7396 merge patch: a null member removes the key. -#}
    CAST(json_merge_patch(to_json({{ alias }}), '{ {%- for c in redact -%}"{{ c }}": null{%- if not loop.last -%}, {% endif -%}{%- endfor -%} }') AS {{ assay.sql_type('string') }})
  {%- endif -%}
{%- endmacro %}

{% macro postgres__row_json(alias, redact=[]) -%}
  (to_jsonb({{ alias }}){% for c in redact %} - '{{ c }}'{% endfor %})::text
{%- endmacro %}

{% macro redshift__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Redshift has no row-to-JSON function; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}

{#- Null members are kept (to_json drops them by default), whatever the session's setting.
    Redacted columns: the row as a map (member order kept), filtered, written again; a
    non-text bronze value then reads as text ("5"), bronze being text this is the same JSON. -#}
{% macro spark__row_json(alias, redact=[]) -%}
  {%- set whole = "to_json(struct(" ~ alias ~ ".*), map('ignoreNullFields', 'false'))" -%}
  {%- if redact | length == 0 -%}
    {{ whole }}
  {%- else -%}
    to_json(map_filter(from_json({{ whole }}, 'map<string,string>'), (k, v) -> k NOT IN ({% for c in redact %}{{ assay.string_literal(c) }}{% if not loop.last %}, {% endif %}{% endfor %})), map('ignoreNullFields', 'false'))
  {%- endif -%}
{%- endmacro %}

{% macro snowflake__row_json(alias, redact=[]) -%}
  TO_JSON(OBJECT_DELETE(OBJECT_CONSTRUCT_KEEP_NULL({{ alias }}.*){% for c in redact %}, '{{ c }}'{% endfor %}))
{%- endmacro %}

{% macro bigquery__row_json(alias, redact=[]) -%}
  TO_JSON_STRING((SELECT AS STRUCT {{ alias }}.*{% if redact %} EXCEPT ({{ redact | join(', ') }}){% endif %}))
{%- endmacro %}

{% macro trino__row_json(alias, redact=[]) -%}
  {{ exceptions.raise_compiler_error('assay.row_json: Trino has no row-to-JSON of a whole row; list the bronze columns in the mapping and use json_object') }}
{%- endmacro %}
