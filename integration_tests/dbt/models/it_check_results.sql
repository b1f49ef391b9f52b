-- depends_on: {{ ref('it_reading') }}
-- What this run recorded for it_reading: every declared and SQL check, passing or not.
{%- set results = api.Relation.create(database=target.database, schema=target.schema, identifier='assay_check_results') %}
select check_id, check_position, kind, enforcement, passed, row_count, measures
from {{ results }}
where run_id = {{ assay.string_literal(invocation_id) }} and table_name = 'it_reading'
