{#- A dollar-quote tag (`assay`, else `assay_0`, `assay_1`, ...) that does not occur in `text`: the
    check's SQL is the author's free text, and a `$assay$` in it (in a string or a comment) would
    otherwise end the DO block's body and run what follows as statements of their own. -#}
{% macro _free_dollar_tag(text) %}
  {%- set ns = namespace(tag='assay') -%}
  {%- for i in range(1000) -%}
    {%- if ('$' ~ ns.tag ~ '$') in text -%}{%- set ns.tag = 'assay_' ~ i -%}{%- endif -%}
  {%- endfor -%}
  {{ return(ns.tag) }}
{% endmacro %}
