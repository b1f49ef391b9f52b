{#
  Generic test: the conservation law of an entity (see conservation_violations).
  Usage on the entity model:
    data_tests:
      - assay.assay_conservation:
          arguments:
            staged: ref('orders__staged')
            reject: ref('orders__reject')
            mappings: [['orders', 'raw_orders', "{{ source('bronze', 'raw_orders') }}"]]
  Not generated: generated entities run the law as a blocking audit before publishing
  (decision 0600).
#}
{% test assay_conservation(model, staged, reject, mappings) %}
  {{ return(adapter.dispatch('test_assay_conservation', 'assay')(model, staged, reject, mappings)) }}
{% endtest %}

{% macro default__test_assay_conservation(model, staged, reject, mappings) %}
{{ assay.conservation_violations(model, staged, reject, mappings) }}
{% endmacro %}
