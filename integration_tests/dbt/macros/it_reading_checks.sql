{#- What `assay generate dbt` writes beside an entity's model (macros/assay/audits/<entity>.sql), by
    hand for it_reading: the blocking audits, the declared checks (generated from the spec of
    tests/integration/test_declared_checks_dbt.py, results recorded in the target schema) and
    three SQL check files. The assay_entity materialization finds them by name. -#}
{% macro default__assay_audits__it_reading(candidate) %}
  {% set audits = [] %}
  {% do audits.append({'name': 'key_unique', 'sql': assay.key_uniqueness_violations(candidate, ["reading_id"])}) %}
  {{ return(audits) }}
{% endmacro %}


{% macro default__assay_sqlchecks__it_reading(candidate) %}
  {% set checks = [] %}
  {% do checks.append({'name': 'block_humidity_known', 'on_failure': 'block', 'sql': "select * from " ~ candidate ~ " where humidity is null"}) %}
  {#- A failing keep check fails the node (decision 0512, tests/integration/test_keep_dbt.py), so here it passes. -#}
  {% do checks.append({'name': 'keep_temp_physical', 'on_failure': 'keep', 'sql': "select * from " ~ candidate ~ " where temp_c < -273.15"}) %}
  {% do checks.append({'name': 'warn_station_b', 'on_failure': 'warn', 'sql': "select * from " ~ candidate ~ " where station = 'B'"}) %}
  {{ return(checks) }}
{% endmacro %}


{% macro default__assay_declared__it_reading(candidate) %}
  {% set checks = [] %}
  {% do checks.append({"check_id": "GRAIN_UNIQUE", "kind": "key_uniqueness", "enforcement": "required", "blocking": true, "position": 1, "columns": ["station", "observed_at"], "types": ["string", "timestamp"], "bounds": {}, "counts": {"rows": "assay_rows", "repeats": "m1_repeats"}, "texts": {"key": ["m1_key_1", "m1_key_2"]}, "sentences": {"frames": {"repeats": ["key (station, observed_at) repeats on ", "repeats", " of ", "rows", " rows, first at (", "key_1", ", ", "key_2", "), where 0 repeats were expected"]}, "hidden": "(pii: not shown)"}}) %}
  {% do checks.append({"check_id": "TEMP_PRESENT", "kind": "null_ceiling", "enforcement": "required", "blocking": true, "position": 2, "columns": ["temp_c"], "types": ["decimal(5,1)"], "bounds": {"max_null_ppm": 250000}, "counts": {"rows": "assay_rows", "nulls": "m2_nulls"}, "texts": {}}) %}
  {% do checks.append({"check_id": "HUMIDITY_IN_RANGE", "kind": "value_range", "enforcement": "required", "blocking": true, "position": 3, "columns": ["humidity"], "types": ["decimal(5,1)"], "bounds": {"min_value": "0", "max_value": "100"}, "counts": {"rows": "assay_rows", "values": "m3_values", "outside": "m3_outside"}, "texts": {"first": "m3_first", "min": "m3_min", "max": "m3_max"}, "orderable": true, "sentences": {"frames": {"above": ["column 'humidity' holds ", "first", ", above the declared maximum of 100"], "below": ["column 'humidity' holds ", "first", ", below the declared minimum of 0"]}, "hidden": "(pii: not shown)"}}) %}
  {% do checks.append({"check_id": "HOURLY", "kind": "continuity", "enforcement": "advisory", "blocking": false, "position": 4, "columns": ["observed_at"], "types": ["timestamp"], "bounds": {"max_gap_seconds": 7200}, "counts": {"rows": "assay_rows", "distinct": "m4_distinct"}, "texts": {"only": "m4_only", "gap": "m4_gap_text", "from": "m4_from", "to": "m4_to"}, "domain": "timestamp", "gap_scale": 1000000, "gap": "m4_gap", "sentences": {"frames": {"gap": ["column 'observed_at' gaps from ", "from", " to ", "to", " by ", "gap", ", above the declared ceiling of 7200, measured in seconds between timestamps"]}, "hidden": "(pii: not shown)"}}) %}
  {% do checks.append({"check_id": "SEQ_STEPS", "kind": "continuity", "enforcement": "advisory", "blocking": false, "position": 5, "columns": ["seq"], "types": ["int"], "bounds": {"max_gap_seconds": 1}, "counts": {"rows": "assay_rows", "distinct": "m5_distinct"}, "texts": {"only": "m5_only", "gap": "m5_gap_text", "from": "m5_from", "to": "m5_to"}, "domain": "numeric", "gap_scale": 1, "gap": "m5_gap", "sentences": {"frames": {"gap": ["column 'seq' gaps from ", "from", " to ", "to", " by ", "gap", ", above the declared ceiling of 1, measured in the column's own units between numbers"]}, "hidden": "(pii: not shown)"}}) %}
  {% do checks.append({"check_id": "ENOUGH_ROWS", "kind": "row_expectation", "enforcement": "required", "blocking": true, "position": 6, "columns": [], "types": [], "bounds": {"min_rows": 3, "max_rows": 100}, "counts": {"rows": "assay_rows"}, "texts": {}}) %}
  {% set sql %}
with assay_t as (
    select * from {{ candidate }}
),
assay_m as (
    select
        count(*) as assay_rows,
        count(*) - count(temp_c) as m2_nulls,
        count(humidity) as m3_values,
        coalesce(sum(case when humidity < cast('0' as {{ assay.sql_type("decimal(1,0)") }}) or humidity > cast('100' as {{ assay.sql_type("decimal(3,0)") }}) then 1 else 0 end), 0) as m3_outside,
        cast(min(case when humidity < cast('0' as {{ assay.sql_type("decimal(1,0)") }}) or humidity > cast('100' as {{ assay.sql_type("decimal(3,0)") }}) then humidity end) as {{ assay.sql_type("string") }}) as m3_first,
        cast(min(humidity) as {{ assay.sql_type("string") }}) as m3_min,
        cast(max(humidity) as {{ assay.sql_type("string") }}) as m3_max,
        count(distinct observed_at) as m4_distinct,
        cast(min(observed_at) as {{ assay.sql_type("string") }}) as m4_only,
        count(distinct seq) as m5_distinct,
        cast(min(seq) as {{ assay.sql_type("string") }}) as m5_only
    from assay_t
),
assay_k1 as (
    select sum(assay_n) over () as m1_repeats, cast(station as {{ assay.sql_type("string") }}) as m1_key_1, cast(observed_at as {{ assay.sql_type("string") }}) as m1_key_2, row_number() over (order by station nulls last, observed_at nulls last) as assay_rn
    from (select station, observed_at, count(*) as assay_n from assay_t group by station, observed_at having count(*) > 1) as assay_g
),
assay_c4 as (
    select m4_gap, cast(assay_lo as {{ assay.sql_type("string") }}) as m4_from, cast(assay_hi as {{ assay.sql_type("string") }}) as m4_to,
        row_number() over (order by m4_gap desc, assay_lo) as assay_rn
    from (
        select assay_lo, assay_hi, {{ assay.continuity_gap('assay_lo', 'assay_hi', "timestamp") }} as m4_gap
        from (select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi
            from (select distinct observed_at as assay_v from assay_t where observed_at is not null) as assay_d) as assay_p
        where assay_lo is not null
    ) as assay_w
),
assay_c5 as (
    select m5_gap, cast(assay_lo as {{ assay.sql_type("string") }}) as m5_from, cast(assay_hi as {{ assay.sql_type("string") }}) as m5_to,
        row_number() over (order by m5_gap desc, assay_lo) as assay_rn
    from (
        select assay_lo, assay_hi, {{ assay.continuity_gap('assay_lo', 'assay_hi', "numeric") }} as m5_gap
        from (select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi
            from (select distinct seq as assay_v from assay_t where seq is not null) as assay_d) as assay_p
        where assay_lo is not null
    ) as assay_w
)
select
    m.*,
    coalesce(k1.m1_repeats, 0) as m1_repeats,
    k1.m1_key_1,
    k1.m1_key_2,
    c4.m4_gap,
    cast(c4.m4_gap as {{ assay.sql_type("string") }}) as m4_gap_text,
    c4.m4_from,
    c4.m4_to,
    c5.m5_gap,
    cast(c5.m5_gap as {{ assay.sql_type("string") }}) as m5_gap_text,
    c5.m5_from,
    c5.m5_to
from assay_m as m
left join assay_k1 as k1 on k1.assay_rn = 1
left join assay_c4 as c4 on c4.assay_rn = 1
left join assay_c5 as c5 on c5.assay_rn = 1
  {% endset %}
  {{ return({'table': "it_reading", 'results_schema': target.schema, 'sql': sql, 'checks': checks}) }}
{% endmacro %}
