{#- Patterns come from the seed through the database, so a backslash that a layer (CSV, Jinja,
    SQL literal) swallowed would change what matches. -#}
{%- set src = ref('regex_input') -%}
select
  case_id,
  case case_id
  {%- for c in seed_values(src, ['case_id', 'pattern']) %}
    when {{ c[0] }} then {{ assay.regex_matches('value', c[1]) }}
  {%- endfor %}
  end as matches,
  case case_id
  {%- for c in seed_values(src, ['case_id', 'pattern', 'grp']) %}
    when {{ c[0] }} then {{ assay.regex_extract('value', c[1], c[2]) }}
  {%- endfor %}
  end as extracted
from {{ src }}
