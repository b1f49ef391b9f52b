{#- Symmetric difference of the model and an expected seed over the seed's columns. Kept here
    rather than taken from dbt-utils: the integration project must build offline. -#}
{% test equals_expected(model, expected) %}
{%- if not execute -%}
select 1 as side where 1 = 0
{%- else -%}
{%- set cols = adapter.get_columns_in_relation(expected) | map(attribute='quoted') | join(', ') -%}
with actual as (select {{ cols }} from {{ model }}),
wanted as (select {{ cols }} from {{ expected }}),
missing as (select * from wanted except select * from actual),
unexpected as (select * from actual except select * from wanted)
select 'missing' as side, m.* from missing as m
union all
select 'unexpected' as side, u.* from unexpected as u
{%- endif -%}
{% endtest %}
