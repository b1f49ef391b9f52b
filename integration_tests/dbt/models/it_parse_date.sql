{%- set src = ref('parse_date_input') -%}
{%- set formats = seed_values(src, ['fmt'], 'fmt') | map(attribute=0) | unique | list -%}
with input as (
  select case_id, fmt, {{ decode_markers('raw') }} as raw from {{ src }}
)
select
  case_id,
  case fmt
  {%- for f in formats %}
    when {{ assay.string_literal(f) }} then {{ assay.parse_date('raw', f) }}
  {%- endfor %}
  end as parsed
from input
