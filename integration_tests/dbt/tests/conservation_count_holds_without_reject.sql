-- An entity with no reject table: every bronze row is kept or deduped.
{{ assay.conservation_count_violations(
     '(select * from ' ~ ref('cons_entity') ~ ') as e',
     '(select * from ' ~ ref('cons_staged') ~ " where _route in ('kept', 'deduped')) as s",
     none,
     [['orders', 'raw_orders', '(select * from ' ~ ref('cons_bronze') ~ " where payload not in ('quarantined', 'failed')) as b"]]) }}
