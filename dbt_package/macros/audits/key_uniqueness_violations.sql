{# Keys that repeat among the rows of a relation (rows with a NULL key part are not an identity). #}
{% macro key_uniqueness_violations(relation, columns) %}
  {{ return(adapter.dispatch('key_uniqueness_violations', 'assay')(relation, columns)) }}
{% endmacro %}

{% macro default__key_uniqueness_violations(relation, columns) %}
select {{ columns | join(', ') }}, count(*) as occurrences
from {{ relation }}
where {% for c in columns %}{{ c }} is not null{% if not loop.last %} and {% endif %}{% endfor %}
group by {{ columns | join(', ') }}
having count(*) > 1
{% endmacro %}
