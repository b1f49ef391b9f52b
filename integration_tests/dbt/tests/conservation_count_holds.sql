-- bronze 7 = entity 3 + open rejects of diverted deliveries 2 + deduped 2 (a superseded delivery
-- and a key loser); the resolved reject row and the one whose bronze row aged out do not count.
{{ assay.conservation_count_violations(ref('cons_entity'), ref('cons_staged'), ref('cons_reject'),
     [['orders', 'raw_orders', ref('cons_bronze')]]) }}
