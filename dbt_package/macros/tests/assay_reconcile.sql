{#
  Generic test: two sides agree within an exact decimal tolerance.
  A side is `<agg>(<column>) by <columns>` over a relation, or a column keyed
  by the entity key (agg none). NULL keys form a group of their own (GROUP BY
  puts NULLs together, which a join would not); a group present on one side
  only is a mismatch. `hidden`: the outputs (`k1`.., `left_value`, `right_value`) that may hold a
  pii value, each shown as '(pii: not shown)' and still compared, so the count is the same: dbt's
  `--store-failures` copies the rows outside the governed tables (decision 1156).
#}
{% test assay_reconcile(model, left_relation, left_column, left_agg, left_by, right_relation, right_column, right_agg, right_by, tolerance, assay_kept=none, hidden=[]) %}
  {%- do assay._kept_gate_of_test(assay_kept) -%}
  {{ return(adapter.dispatch('test_assay_reconcile', 'assay')(model, left_relation, left_column, left_agg, left_by, right_relation, right_column, right_agg, right_by, tolerance, hidden)) }}
{% endtest %}

{% macro default__test_assay_reconcile(model, left_relation, left_column, left_agg, left_by, right_relation, right_column, right_agg, right_by, tolerance, hidden=[]) %}
{%- set n = left_by | length -%}
with assay_left as (
  select {% for c in left_by %}{{ c }} as k{{ loop.index }}, {% endfor %}{{ left_agg ~ '(' ~ left_column ~ ')' if left_agg else left_column }} as v
  from {{ left_relation }}
  {% if left_agg %}group by {% for c in left_by %}{{ c }}{% if not loop.last %}, {% endif %}{% endfor %}{% endif %}
),
assay_right as (
  select {% for c in right_by %}{{ c }} as k{{ loop.index }}, {% endfor %}{{ right_agg ~ '(' ~ right_column ~ ')' if right_agg else right_column }} as v
  from {{ right_relation }}
  {% if right_agg %}group by {% for c in right_by %}{{ c }}{% if not loop.last %}, {% endif %}{% endfor %}{% endif %}
),
assay_sides as (
  select {% for i in range(1, n + 1) %}k{{ i }}, {% endfor %}v as left_value, null as right_value, 1 as in_left, 0 as in_right from assay_left
  union all
  select {% for i in range(1, n + 1) %}k{{ i }}, {% endfor %}null as left_value, v as right_value, 0 as in_left, 1 as in_right from assay_right
)
{%- if hidden %}
{#- the groups found as without `hidden`, then shown: one row each, so the count is the same -#}
{%- set outputs = [] %}{% for i in range(1, n + 1) %}{% do outputs.append('k' ~ i) %}{% endfor %}
select {% for c in outputs + ['left_value', 'right_value'] -%}
  {{ assay.string_literal('(pii: not shown)') ~ ' as ' ~ c if c in hidden else 'assay_g.' ~ c }}{% if not loop.last %}, {% endif %}
{%- endfor %}
from (
{%- endif %}
select {% for i in range(1, n + 1) %}k{{ i }}, {% endfor %}max(left_value) as left_value, max(right_value) as right_value
from assay_sides
group by {% for i in range(1, n + 1) %}k{{ i }}{% if not loop.last %}, {% endif %}{% endfor %}
having case
  when sum(in_left) = 0 or sum(in_right) = 0 then true
  when max(left_value) is null and max(right_value) is null then false
  when max(left_value) is null or max(right_value) is null then true
  else abs(max(left_value) - max(right_value)) > {{ tolerance }}
end
{%- if hidden %}
) as assay_g
{%- endif %}
{% endmacro %}
