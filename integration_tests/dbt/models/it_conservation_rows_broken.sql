-- The entity lost source row 2: the row form names the delivery placed nowhere.
{{ assay.conservation_violations(ref('cons_entity_broken'), ref('cons_staged'), ref('cons_reject'),
     [['orders', 'raw_orders', ref('cons_bronze')]]) }}
