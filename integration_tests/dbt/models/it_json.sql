select
  case_id,
  {{ assay.json_extract_text('doc', ['a', 'b']) }} as a_b,
  {{ assay.json_extract_text('doc', ['t']) }} as t,
  {{ assay.json_extract_text('doc', ['nul']) }} is null as nul_is_null,
  {{ assay.json_extract_text('doc', ['missing', 'deeper']) }} is null as missing_is_null,
  {{ assay.json_extract_text('doc', ['we"ird/key~']) }} as weird,
  {{ assay.json_extract_text('doc', ['arr']) }} as arr,
  {{ assay.json_extract_text('doc', ['a']) }} as a_object,
  {{ assay.json_object([['id', 'case_id'], ['name', 'name'], ['qty', 'qty'], ['flag', 'flag'],
                        ['day', 'day'], ['nothing', 'cast(null as ' ~ assay.sql_type('string') ~ ')']]) }} as object_text
from {{ ref('json_input') }}
