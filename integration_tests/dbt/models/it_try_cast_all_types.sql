{#- Every input through every type. Nothing is compared: building this table is the test,
    since try_cast must never raise whatever the text. -#}
with input as (
  select {{ decode_markers('raw') }} as raw from {{ ref('try_cast_input') }}
  union all select {{ decode_markers('raw') }} from {{ ref('parse_ts_input') }}
  union all select value from {{ ref('regex_input') }}
)
select
  raw,
  {{ assay.try_cast('raw', 'int') }} as as_int,
  {{ assay.try_cast('raw', 'decimal(10,2)') }} as as_decimal,
  {{ assay.try_cast('raw', 'decimal(38,0)') }} as as_wide_decimal,
  {{ assay.try_cast('raw', 'date') }} as as_date,
  {{ assay.try_cast('raw', 'timestamp') }} as as_timestamp,
  {{ assay.try_cast('raw', 'bool') }} as as_bool,
  {{ assay.try_cast('raw', 'variant') }} as as_variant,
  {{ assay.parse_ts('raw', 'ISO8601') }} as as_iso,
  {{ assay.parse_ts('raw', '%d/%m/%Y %H:%M') }} as as_strftime,
  {{ assay.parse_date('raw', 'ISO8601') }} as as_iso_date
from input
