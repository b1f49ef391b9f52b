{#- Engines whose literals read backslash escapes: double the backslash so that a regex
    such as \d reaches the engine intact. -#}
{% macro _backslash_string_literal(value, quote_escape="\\'") -%}
  {%- if value is none -%}{{ return('NULL') }}{%- endif -%}
  {%- set escaped = value | string | replace('\\', '\\\\') | replace("'", quote_escape)
                    | replace('\n', '\\n') | replace('\r', '\\r') -%}
  {{ return("'" ~ escaped ~ "'") }}
{%- endmacro %}
