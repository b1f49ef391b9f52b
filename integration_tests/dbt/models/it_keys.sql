select
  case_id,
  {{ assay.reject_id('bronze.orders', 'source_row_id') }} as reject_id,
  {{ assay.reject_id('bronze.orders', 'case_id') }} as reject_id_of_int,
  {{ assay.reject_id('bronze.orders', 'source_row_id', 'export') }} as reject_id_of_mapping,
  {{ assay.unknown_member('fk', 'probe') }} as member
from {{ ref('keys_input') }}
