{#
  Generic test: every admitted parent row has at least `min` admitted children.
  Attached to the parent model. `pairs` is a list of [child column, parent column].
  Both sides are admitted rows only, as every consumer of silver sees them.
  `hidden`: the parent columns classified pii; each is shown as '(pii: not shown)' and still
  grouped by, so the count is the same: dbt's `--store-failures` copies the rows outside the
  governed tables (decision 1156).
#}
{% test assay_coverage(model, child, pairs, min=1, parent_filter=none, assay_kept=none, hidden=[]) %}
  {%- do assay._kept_gate_of_test(assay_kept) -%}
  {{ return(adapter.dispatch('test_assay_coverage', 'assay')(model, child, pairs, min, parent_filter, hidden)) }}
{% endtest %}

{% macro default__test_assay_coverage(model, child, pairs, min=1, parent_filter=none, hidden=[]) %}
select {% for c, p in pairs %}{% if p in hidden %}{{ assay.string_literal('(pii: not shown)') }} as {{ p }}{% else %}parent.{{ p }}{% endif %}{% if not loop.last %}, {% endif %}{% endfor %}, count(child.{{ pairs[0][0] }}) as children
from {{ model }} as parent
left join {{ child }} as child
  on {% for c, p in pairs %}child.{{ c }} = parent.{{ p }}{% if not loop.last %} and {% endif %}{% endfor %}
{% if parent_filter %}where {{ parent_filter }}{% endif %}
group by {% for c, p in pairs %}parent.{{ p }}{% if not loop.last %}, {% endif %}{% endfor %}
having count(child.{{ pairs[0][0] }}) < {{ min }}
{% endmacro %}
