{#- Each value is read at compile time and written back as a literal; the round trip must
    reproduce the seed exactly. -#}
{%- set cases = seed_values(ref('string_literal_cases'), ['case_id', 'value']) -%}
{%- for c in cases %}
select {{ c[0] }} as case_id, {{ assay.string_literal(c[1]) }} as value
{%- if not loop.last %} union all{% endif %}
{%- else %}
select 0 as case_id, 'unused' as value
{%- endfor %}
