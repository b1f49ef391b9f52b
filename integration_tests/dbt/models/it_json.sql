{#- Each path read is guarded as a generated model guards it on an opted-in entity (decision
    1123): text that is not JSON reads as NULL (and `readable` is false), never an error. -#}
{%- set ok = assay.json_valid('doc') -%}
select
  case_id,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['a', 'b']) }} end as a_b,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['t']) }} end as t,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['nul']) }} end is null as nul_is_null,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['missing', 'deeper']) }} end is null as missing_is_null,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['we"ird/key~']) }} end as weird,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['arr']) }} end as arr,
  case when {{ ok }} then {{ assay.json_extract_text('doc', ['a']) }} end as a_object,
  {{ assay.json_object([['id', 'case_id'], ['name', 'name'], ['qty', 'qty'], ['flag', 'flag'],
                        ['day', 'day'], ['nothing', 'cast(null as ' ~ assay.sql_type('string') ~ ')']]) }} as object_text,
  {{ ok }} as readable
from {{ ref('json_input') }}
