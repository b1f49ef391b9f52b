{#- Each path read is guarded as a generated model guards it on an opted-in entity (decision
    1123): text that is not JSON reads as NULL (and `readable` is false), never an error. The
    `*_blocked` columns ask, under the same guard, whether the document's shape stops a read of
    that path (decision 1130): a string, number, boolean or array where a key is read. -#}
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
  {{ ok }} as readable,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['a', 'b']) }} end as a_b_blocked,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['a', 'b', 'c']) }} end as a_b_c_blocked,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['t', 'x']) }} end as t_x_blocked,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['nul', 'x']) }} end as nul_x_blocked,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['missing', 'x', 'y']) }} end as missing_x_y_blocked,
  case when {{ ok }} then {{ assay.json_path_blocked('doc', ['arr', 'x']) }} end as arr_x_blocked
from {{ ref('json_input') }}
