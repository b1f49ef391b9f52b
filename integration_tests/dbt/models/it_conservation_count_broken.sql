-- The entity lost source row 2: the count form of the conservation law reports the counts.
{{ assay.conservation_count_violations(ref('cons_entity_broken'), ref('cons_staged'), ref('cons_reject'),
     [['orders', 'raw_orders', ref('cons_bronze')]]) }}
