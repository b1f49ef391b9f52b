-- Where an incremental entity's window starts: the ledger's newest _ingested_at minus the lag;
-- NULL while the ledger is empty.
select
  {{ assay.incremental_window_start(ref('ledger_input'), 6) }} as window_lag_6h,
  {{ assay.incremental_window_start(ref('ledger_input'), 0) }} as window_lag_0h,
  {{ assay.incremental_window_start('(select * from ' ~ ref('ledger_input') ~ ' where 1 = 0) as empty_ledger', 6) }} as window_empty
