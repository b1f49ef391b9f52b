{#- The kept gate of a generated coverage or reconcile test: `assay_kept` is {'meta': <meta schema>,
    'tables': [[<entity>, <the model the test reads>], ...]}; none for a test written by hand. -#}
{% macro _kept_gate_of_test(assay_kept) %}
  {%- if not assay_kept or not execute -%}{{ return('') }}{%- endif -%}
  {%- set tables = [] -%}
  {%- for t in assay_kept['tables'] -%}{%- do tables.append({'table': t[0], 'relation': ref(t[1])}) -%}{%- endfor -%}
  {{ return(assay.kept_gate(tables, assay_kept['meta'])) }}
{% endmacro %}
