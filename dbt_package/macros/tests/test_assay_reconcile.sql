{#
  Generic test: two sides agree within an exact decimal tolerance.
  A side is `<agg>(<column>) by <columns>` over a relation, or a column keyed
  by the entity key (agg none). NULL keys form a group of their own; a group
  present on one side only is a mismatch.
#}
{% test assay_reconcile(model, left_relation, left_column, left_agg, left_by, right_relation, right_column, right_agg, right_by, tolerance) %}
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
)
select {% for i in range(1, n + 1) %}coalesce(l.k{{ i }}, r.k{{ i }}) as k{{ i }}, {% endfor %}l.v as left_value, r.v as right_value
from assay_left as l
full outer join assay_right as r
  on {% for i in range(1, n + 1) %}(l.k{{ i }} = r.k{{ i }} or (l.k{{ i }} is null and r.k{{ i }} is null)){% if not loop.last %} and {% endif %}{% endfor %}
where case
  when l.v is null and r.v is null then false
  when l.v is null or r.v is null then true
  else abs(l.v - r.v) > {{ tolerance }}
end
{% endtest %}
