{{ config(materialized='assay_entity', assay_audits='assay_audits__it_reading', assay_meta_schema=target.schema) }}
-- Write-audit-publish with the audits, declared checks and SQL checks of macros/it_reading_checks.sql.
-- With var it_break_required a reading outside the declared humidity range makes a required
-- check fail: the build stops with CHECK_FAILED and the published table stays as it was.
select reading_id, station, observed_at, humidity, temp_c, seq
from {{ ref('readings_input') }}
{% if var('it_break_required', false) %}
union all
select 'R5', 'C', cast('2025-01-01 07:00:00' as {{ assay.sql_type('timestamp') }}),
  cast('101.0' as {{ assay.sql_type('decimal(5,1)') }}), cast('9.0' as {{ assay.sql_type('decimal(5,1)') }}), 5
{% endif %}
