{{ config(materialized='incremental') }}
-- An incremental run stops, naming the full refresh, when the ledger lacks a column the build
-- reads back (tests/dbt_package/test_dbt_package_integration.py asks for a missing one).
{{ assay.incremental_ledger_check(this, var('it_ledger_columns', ['case_id', 'amount'])) }}
select case_id, amount from {{ ref('flags_input') }}
{% if is_incremental() %}
where case_id > (select max(case_id) from {{ this }})
{% endif %}
