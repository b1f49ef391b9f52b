{#- Patterns come from the seed through the database, so a backslash that a layer (CSV, Jinja,
    SQL literal) swallowed would change what matches.
    The last two columns run the group rewrites that BigQuery/Redshift (one capturing group)
    and Snowflake (no (?:...)) depend on, here where an engine can check them. -#}
{%- set src = ref('regex_input') -%}
{%- set cases = seed_values(src, ['case_id', 'pattern', 'grp']) -%}
select
  case_id,
  case case_id
  {%- for c in cases %}
    when {{ c[0] }} then {{ assay.regex_matches('value', c[1]) }}
  {%- endfor %}
  end as matches,
  case case_id
  {%- for c in cases %}
    when {{ c[0] }} then {{ assay.regex_extract('value', c[1], c[2]) }}
  {%- endfor %}
  end as extracted,
  case case_id
  {%- for c in cases %}
    {%- set single = assay._regex_groups(c[1], c[2] | int) %}
    when {{ c[0] }} then {{ assay.regex_extract('value', single.pattern, single.group) }}
  {%- endfor %}
  end as extracted_single_group,
  case case_id
  {%- for c in cases %}
    {%- set posix = assay._regex_groups(c[1], c[2] | int, true) %}
    when {{ c[0] }} then {{ assay.regex_extract('value', posix.pattern, posix.group) }}
  {%- endfor %}
  end as extracted_posix_groups
from {{ src }}
