{#
  Generic test: the conservation law of an entity (see conservation_violations).
  Usage on the entity model:
    data_tests:
      - assay.assay_conservation:
          staged: ref('orders__staged')
          reject: ref('orders__reject')
          mappings: [['orders', 'raw_orders', source('bronze', 'raw_orders')]]
#}
{% test assay_conservation(model, staged, reject, mappings) %}
{{ assay.conservation_violations(model, staged, reject, mappings) }}
{% endtest %}
