{#- The characters `trim` removes from both ends: Unicode's White_Space property (decision
    0960). Engines' own trim() disagree (DuckDB strips the space separators, PostgreSQL and
    Spark U+0020 only), so the set is named here and handed to every engine. Spelled with
    code points so no raw control character reaches a file. -#}
{% macro _white_space() -%}
  {%- set points = [9, 10, 11, 12, 13, 32, 133, 160, 5760, 8192, 8193, 8194, 8195, 8196, 8197, 8198,
                    8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287, 12288] -%}
  {%- set ns = namespace(chars='') -%}
  {%- for p in points -%}{%- set ns.chars = ns.chars ~ ('%c' | format(p)) -%}{%- endfor -%}
  {{ return(ns.chars) }}
{%- endmacro %}
