{%- set src = ref('to_utc_input') -%}
{%- set zones = seed_values(src, ['zone'], 'zone') | map(attribute=0) | unique | list -%}
select
  case_id,
  case zone
  {%- for z in zones %}
    when {{ assay.string_literal(z) }} then {{ assay.to_utc('local_ts', z) }}
  {%- endfor %}
  end as utc_ts
from {{ src }}
