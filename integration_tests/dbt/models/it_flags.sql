{%- set rules = [
  ['amount_negative', 'amount < 0'],
  ['status_unknown', "status not in ('new', 'paid')"],
] -%}
with flagged as (
  select case_id, {{ assay.quality_flags(rules) }} as _quality_flags, {{ assay.quality_flags([]) }} as no_rules
  from {{ ref('flags_input') }}
)
select
  case_id,
  _quality_flags,
  {{ show_empty(assay.flags_to_text('_quality_flags')) }} as flags_text,
  {{ assay.quality_ok('_quality_flags') }} as is_ok,
  {{ assay.flags_contain('_quality_flags', 'amount_negative') }} as has_amount_negative,
  {{ assay.flags_contain('_quality_flags', 'status_unknown') }} as has_status_unknown,
  _quality_flags is null as flags_is_null,
  {{ assay.quality_ok('no_rules') }} as no_rules_ok,
  {{ show_empty(assay.flags_to_text('no_rules')) }} as no_rules_text
from flagged
