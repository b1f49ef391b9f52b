with input as (
  select case_id, {{ decode_markers('value') }} as value from {{ ref('text_input') }}
)
select
  case_id,
  {{ assay.char_length('value') }} as char_length,
  {{ assay.is_nfc('value') }} as is_nfc,
  {{ assay.charset_violates('value', [[32, 126]], 'allow') }} as outside_printable_ascii,
  {{ assay.charset_violates('value', [[0, 31], [127, 159]], 'forbid') }} as has_control,
  {{ assay.charset_violates('value', [[127744, 129791]], 'forbid') }} as has_emoji,
  {{ assay.charset_violates('value', [], 'allow') }} as allow_nothing,
  {{ assay.charset_violates('value', [], 'forbid') }} as forbid_nothing,
  {{ assay.char_length(assay.trim_white_space('value')) }} as trimmed_length
from input
