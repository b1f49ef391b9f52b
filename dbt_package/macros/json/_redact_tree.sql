{#- {'a': {'ssn': none}}: none removes the key, a dict descends into it. -#}
{% macro _redact_tree(paths) -%}
  {%- set tree = {} -%}
  {%- for p in paths -%}
    {%- set node = namespace(d=tree) -%}
    {%- for k in p[:-1] -%}{%- do node.d.setdefault(k, {}) -%}{%- set node.d = node.d[k] -%}{%- endfor -%}
    {%- do node.d.update({p[-1]: none}) -%}
  {%- endfor -%}
  {{ return(tree) }}
{%- endmacro %}
