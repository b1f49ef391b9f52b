{%- set types = {'as_int': 'int', 'as_decimal': 'decimal(10,2)', 'as_date': 'date', 'as_timestamp': 'timestamp',
                 'as_bool': 'bool', 'as_string': 'string'} -%}
with input as (
  select case_id, assay_type, {{ decode_markers('raw') }} as raw from {{ ref('try_cast_input') }}
)
select
  case_id,
  {%- for col, t in types.items() %}
  case when assay_type = '{{ t }}' then {{ assay.try_cast('raw', t) }} end as {{ col }},
  {%- endfor %}
  case when assay_type = 'variant' then {{ assay.try_cast('raw', 'variant') }} is not null end as variant_ok
from input
