"""Declared table checks (000) and a SQL check file (002) on Apache Spark (local mode, parquet):
measured on the candidate, a required or blocking failure sets the table back (the published
table keeps the previous build), advisory failures publish, and every result is recorded in
assay_meta.assay_check_results (an INSERT INTO, which parquet takes). The build-time anomaly
check (decision 1030) runs in the same measuring query: after three real builds and seeded
history, a `warn` metric publishes and a `fail` metric sets the entity back.

The spec and the sentences are tests/integration/test_declared_checks_dbt.py's (written by hand
there for DuckDB and PostgreSQL); Spark must produce the same ones. Four builds in one Spark
process, the test process's shared one (tests/support/spark.py). The results are read from the table,
and their sentences rendered as `assay checks` renders them (runtime.check_results.CheckResults over
this process's Spark: the warehouse's in-memory catalog is this process's own, so the CLI's own
child Spark could not see it). The tests run in file order: the anomaly build follows the first
test's three.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.integration.test_declared_checks_dbt import ENTITIES, HUMIDITY_ROWS, MAPPING, STATION_MAPPING, STATIONS, published, readings, run_id
from assay.runtime.check_results import CheckResults
from tests.support import dbtresults, spark
from tests.support.corpus import Relation
from tests.support.engines import SPARK, Engine

pytestmark = [pytest.mark.slow, pytest.mark.spark]

# Rate thresholds (decision 0980) on an entity without rules: nothing is quarantined or flagged, so
# both hold; what this proves is that Spark counts the staged relation inside the measuring query.
# Change limits (decision 0981): what this proves is that Spark's measuring query reads the earlier
# runs (mart, results, events) and skips the set-back one. Anomaly checks (decision 1030): the
# volume of `reading` (`warn`) and of `station` (`fail`), one on_breach per entity.
THRESHOLDS = ('    thresholds: {max_quarantine_rate: "0", max_flag_rate: 0, min_rows: 1, on_breach: fail,\n'
              '                 max_increase: {factor: "2", floor: 1}, max_volume_change: {factor: "3", floor: 100}}\n')
SPARK_ENTITIES = ENTITIES.replace("    checks:\n      - {check_id: grain_unique", THRESHOLDS + "    checks:\n      - {check_id: grain_unique", 1)
# The anomaly checks join the spec when their test starts (the project is generated again): the
# detector's query costs Spark about 10 s a build, and the first test's builds do not judge it
# (too little history); the mart rows they leave are the history the anomaly test learns from.
READING_ANOMALY = "                 anomaly: {metrics: [volume], on_breach: warn, min_history: 3}}\n"
STATION_ANOMALY = "    thresholds: {anomaly: {metrics: [volume], on_breach: fail, min_history: 3}}\n"
ANOMALY_ENTITIES = SPARK_ENTITIES.replace('max_volume_change: {factor: "3", floor: 100}}\n',
                                          'max_volume_change: {factor: "3", floor: 100},\n' + READING_ANOMALY, 1)
ANOMALY_ENTITIES = ANOMALY_ENTITIES.replace("    checks:\n      - {check_id: station_rows",
                                            STATION_ANOMALY + "    checks:\n      - {check_id: station_rows", 1)

TOO_HOT = """/* assay
on_failure: block
description: A reading above 30 degrees waits for a second look.
*/
select r.reading_id from silver.reading as r where r.temp_c > 30
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    spec = tmp_path_factory.mktemp("spec")
    assert "anomaly:" not in SPARK_ENTITIES and ANOMALY_ENTITIES.count("anomaly:") == 2
    (spec / "entities.yml").write_text(SPARK_ENTITIES)
    (spec / "readings.yml").write_text(MAPPING)
    (spec / "stations.yml").write_text(STATION_MAPPING)
    checks = spec / "checks" / "silver" / "reading"
    checks.mkdir(parents=True)
    (checks / "too_hot.sql").write_text(TOO_HOT)
    made = Engine(SPARK).dbt_project(tmp_path_factory.mktemp("spark_checks"), spec, "checks")
    made.spec_dir = spec
    yield made
    spark.close_all()


def results(project, rid: str) -> dict:
    """check_id -> (passed, row_count): the candidate's rows for a declared check, the rows a SQL
    check returned for a SQL check (decision 0502, _run_sql_checks)."""
    rows = project.query(
        "select check_id, passed, row_count from assay_meta.assay_check_results "
        f"where run_id = '{rid}' and table_name = 'reading'"
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def rate_measures(project, rid: str) -> dict:
    """check_id -> the recorded counts of the rate thresholds of one run."""
    rows = project.query("select check_id, measures from assay_meta.assay_check_results "
                         f"where run_id = '{rid}' and table_name = 'reading' and kind like '%_rate'")
    return {r[0]: json.loads(r[1]) for r in rows}


def test_pass_then_set_back_then_advisory_failure(project):
    # 1. Everything holds: published, every check recorded as passed.
    project.load_bronze([STATIONS, readings(
        ["r1", "A", "2026-03-01T00:00:00Z", "40.5", "10.0", "1"],
        ["r2", "A", "2026-03-01T01:00:00Z", "100", "11.0", "2"],
        ["r3", "B", "2026-03-01T01:00:00Z", "0", None, "3"],
        ["r4", "B", "2026-03-01T02:30:00Z", None, "12.5", "4"],
    )])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-5000:]
    first = run_id(project)
    assert published(project) == ["r1", "r2", "r3", "r4"]
    assert results(project, first) == {
        "GRAIN_UNIQUE": (True, 4), "TEMP_PRESENT": (True, 4), "HUMIDITY_IN_RANGE": (True, 4), "HOURLY": (True, 4),
        "SEQ_STEPS": (True, 4), "ENOUGH_ROWS": (True, 4), "silver.reading/too_hot": (True, 0),
        "QUARANTINE_RATE": (True, 4), "FLAG_RATE": (True, 4), "QUARANTINE_INCREASE": (True, 4), "VOLUME_CHANGE": (True, 4),
    }
    assert rate_measures(project, first) == {"QUARANTINE_RATE": {"evaluated": 4, "failing": 0, "rows": 4},
                                             "FLAG_RATE": {"evaluated": 4, "failing": 0, "rows": 4}}

    # 2. Three required checks and the blocking SQL check fail: CHECK_FAILED, the table keeps build 1.
    project.load_bronze([STATIONS, readings(
        ["r5", "A", "2026-03-01T00:00:00Z", "104.5", None, "1"],
        ["r6", "A", "2026-03-01T00:00:00Z", "50", None, "2"],
        ["r7", "B", "2026-03-01T01:00:00Z", "-3", "31.0", "3"],
    )])
    proc = project.dbt("build")
    assert proc.returncode != 0
    assert dbtresults.not_ok(project) == {"model.assay_it.reading": "error"}
    detail, candidate = dbtresults.check_failed(project, "model.assay_it.reading")
    assert detail == (
        "GRAIN_UNIQUE: key (station, observed_at) repeats on 2 of 3 rows, first at ('A', '2026-03-01T00:00:00Z'), "
        "where 0 repeats were expected; "
        "TEMP_PRESENT: column 'temp_c' is 666667 ppm null (2 of 3 rows), above the declared ceiling of 250000 ppm; "
        "HUMIDITY_IN_RANGE: column 'humidity' holds '-3', below the declared minimum of 0; "
        "silver.reading/too_hot: returned 1 row"
    ), detail
    assert sorted(project.query(f"select reading_id, humidity, temp_c from {candidate}")) == [
        ("r5", Decimal("104.5"), None), ("r6", Decimal("50.0"), None), ("r7", Decimal("-3.0"), Decimal("31.0"))]
    second = run_id(project)
    assert second != first
    assert published(project) == ["r1", "r2", "r3", "r4"]
    # the rows the range check kept, shown as on DuckDB and PostgreSQL (decision 0952): Spark's JSON
    # writes its timestamps with milliseconds and an offset, its decimals with their scale
    from assay import exactjson
    from assay.api import load_project
    from assay.checks.kept_values import shown_rows
    from assay.lower.check_rows import kept_row_types

    spec = load_project(project.spec_dir)
    kept = CheckResults(_SparkReader(project), "assay_meta").kept_rows(second, "HUMIDITY_IN_RANGE")
    shown = shown_rows(kept, lambda table, check: kept_row_types(spec, table, check), "spark")
    expected = exactjson.loads(HUMIDITY_ROWS.replace('"temp_c": 9', '"temp_c": 31'))
    assert [exactjson.dumps(i["row"]) for i in shown] == [exactjson.dumps(i["row"]) for i in expected]
    assert results(project, second) == {
        "GRAIN_UNIQUE": (False, 3), "TEMP_PRESENT": (False, 3), "HUMIDITY_IN_RANGE": (False, 3), "HOURLY": (True, 3),
        "SEQ_STEPS": (True, 3), "ENOUGH_ROWS": (True, 3), "silver.reading/too_hot": (False, 1),
        "QUARANTINE_RATE": (True, 3), "FLAG_RATE": (True, 3), "QUARANTINE_INCREASE": (True, 3), "VOLUME_CHANGE": (True, 3),
    }

    # 3. Only advisory checks fail: the build publishes and the failures are recorded.
    project.load_bronze([STATIONS, readings(
        ["r8", "A", "2026-03-01T00:00:00Z", "10", "1.0", "1"],
        ["r9", "A", "2026-03-01T05:00:00Z", "20", "2.0", "5"],
        ["r10", "B", "2026-03-01T05:00:00Z", "30", "3.0", "6"],
    )])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-5000:]
    third = run_id(project)
    assert published(project) == ["r10", "r8", "r9"]
    assert results(project, third) == {
        "GRAIN_UNIQUE": (True, 3), "TEMP_PRESENT": (True, 3), "HUMIDITY_IN_RANGE": (True, 3), "HOURLY": (False, 3),
        "SEQ_STEPS": (False, 3), "ENOUGH_ROWS": (True, 3), "silver.reading/too_hot": (True, 0),
        "QUARANTINE_RATE": (True, 3), "FLAG_RATE": (True, 3), "QUARANTINE_INCREASE": (True, 3), "VOLUME_CHANGE": (True, 3),
    }
    changes = {r[0]: (r[1], json.loads(r[2])) for r in project.query(
        "select check_id, passed, measures from assay_meta.assay_check_results "
        f"where run_id = '{third}' and table_name = 'reading' and kind in ('quarantine_increase', 'volume_change')")}
    # Build 2 was set back, so the previous successful run of build 3 is build 1; there is no run
    # before that, so the volume (a load against the load before it) is not judged yet.
    assert changes == {
        "QUARANTINE_INCREASE": (True, {"evaluated": 3, "failing": 0, "previous_evaluated": 4, "previous_failing": 0,
                                       "previous_run": first, "rows": 3}),
        "VOLUME_CHANGE": (True, {"bronze": 3, "earlier_bronze": None, "earlier_run": None, "previous_bronze": 4,
                                 "previous_run": first, "rows": 3})}
    # every run's results stay: the failing run's too
    runs = {r[0] for r in project.query("select distinct run_id from assay_meta.assay_check_results where table_name = 'reading'")}
    assert runs == {first, second, third}


def test_anomalies_on_spark_give_duckdbs_verdicts(project):
    """Issue 20: the anomaly detector's one SQL text, in the spelling assay's Spark reader gives it
    (runtime/spark_conn.to_spark, what `assay anomalies` runs on a Spark warehouse), gives on
    Spark exactly DuckDB's verdicts, run for run, on a history with a weekly pattern, a failed run,
    a spike and a drop; and finds the injected events without a false alarm. The Spark process
    is this module's (no JVM of its own). Spark runs the round at the state DuckDB's rounds settled
    on and must settle there too: the rounds are Python, the same on every engine, and a Spark
    round costs about 5 to 10 s (2 to 3 s of it planning; 40 to 50 s before the text became a chain
    of CTEs each read about once, decision 1030: Spark re-plans each reference to a CTE)."""
    import duckdb

    from assay.anomalies import synthetic
    from assay.anomalies.detect import _verdict, detect, next_state
    from assay.anomalies.method import band_sql
    from assay.anomalies.method import QUARANTINE_RATE, VOLUME
    from assay.anomalies.synthetic import MART_COLUMNS, Event
    from assay.runtime.spark_conn import to_spark

    # Short on purpose: Spark's cost grows with runs x earlier runs.
    history = synthetic.generate(
        24, 3, weekly=True, failed_runs=(9,),
        events=(Event(VOLUME, 12, "spike", 3.0), Event(QUARANTINE_RATE, 18, "spike", 3.0), Event(VOLUME, 22, "drop", 0.25)))
    con = duckdb.connect()
    try:
        con.execute("create schema gold")
        synthetic.load_into(con, "gold.mart_data_quality", history)
        on_duckdb = detect(lambda q: con.execute(q).fetchall(), "duckdb", ("gold", "mart_data_quality"))
    finally:
        con.close()

    # The mart as a build leaves it on Spark: typed parquet columns, loaded through text.
    text_rows = [[None if v is None else str(v) for v in row] for row in history.rows]
    project._call("load", ("anomaly_gold", "mart_text", list(MART_COLUMNS), text_rows, "parquet"))
    types = {"rows_evaluated": "bigint", "rows_failed": "bigint", "rows_quarantined": "bigint", "rows_deduped": "bigint",
             "run_date": "date", "run_started_at": "timestamp"}
    typed = ", ".join(f"cast({c} as {types[c]}) as {c}" if c in types else c for c in MART_COLUMNS)
    project.query(f"create table anomaly_gold.mart_data_quality using parquet as select {typed} from anomaly_gold.mart_text")
    settled = next_state(on_duckdb)
    on_spark = [_verdict(r) for r in project.query(to_spark(band_sql("spark", ("anomaly_gold", "mart_data_quality"), settled)))]
    assert next_state(on_spark) == settled

    def key(v):
        r = lambda x: None if x is None else round(x, 9)  # noqa: E731 - floats summed in another order
        return (v.entity, v.measure, v.run_id, str(v.run_date), v.failed, r(v.observed), v.history, v.season,
                v.learnt_from, r(v.median), r(v.low), r(v.high), v.judged, v.direction)

    assert len(on_spark) == len(on_duckdb) > 0
    assert [key(v) for v in on_spark] == [key(v) for v in on_duckdb]
    score = synthetic.score(history, on_spark)
    assert (score.hits, score.false_alarms) == (len(history.events), 0), score
    assert any(v.failed for v in on_spark)


class _SparkReader:
    """What runtime.check_results.CheckResults reads through (runtime.warehouse.Reader's `query`,
    `exists`, `relation`), over this module's Spark: `assay checks`' own rendering of the results."""

    def __init__(self, project) -> None:
        self.project = project

    def query(self, sql: str, params: tuple = ()) -> list[tuple]:
        for p in params:
            sql = sql.replace("?", "'" + str(p).replace("'", "''") + "'", 1)
        return self.project.query(sql)

    def relation(self, *parts: str) -> str:
        return ".".join(parts)

    def exists(self, schema: str, table: str) -> bool:
        return bool(self.project.query(f"show tables in {schema} like '{table}'"))


def _literal(value) -> str:
    """A Spark SQL literal of one value read back from the mart."""
    import datetime as dt

    if value is None:
        return "null"
    if isinstance(value, dt.datetime):
        return f"timestamp'{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"date'{value.isoformat()}'"
    if isinstance(value, (int, Decimal)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _seed_history(project, entity: str, last: str, bronze: list[int]) -> None:
    """Runs of `entity` after its last real run `last`, one per entry of `bronze` (the bronze rows
    it saw, all evaluated, none deduped or quarantined): copies of that run's mart row, a
    millisecond apart, as tests/integration/test_anomaly_shift_dbt.py seeds them on DuckDB and
    PostgreSQL. No check result is recorded for them: they are clean runs."""
    import datetime as dt

    columns = [r[0] for r in project.query("show columns in gold.mart_data_quality")]
    [row] = project.query(f"select * from gold.mart_data_quality where entity = '{entity}' and run_id = '{last}'")
    values = []
    for k, count in enumerate(bronze, 1):
        v = dict(zip(columns, row))
        assert v["rule"] == "(entity)", v
        at = v["run_started_at"] + dt.timedelta(milliseconds=k)
        v.update(run_id=f"seed-{k}", run_started_at=at, run_date=at.date(), rows_evaluated=count, rows_failed=0,
                 rows_quarantined=0, rows_deduped=0)
        values.append("(" + ", ".join(_literal(v[c]) for c in columns) + ")")
    project.query(f"insert into gold.mart_data_quality values {', '.join(values)}")


def _hourly(prefix: str, count: int):
    """`count` hourly readings of station A, which hold every declared check."""
    import datetime as dt

    start = dt.datetime(2026, 3, 2)
    return readings(*[[f"{prefix}{i:03d}", "A", (start + dt.timedelta(hours=i)).isoformat() + "Z", "50", "10", str(i + 1)]
                      for i in range(count)])


def _stations(count: int) -> Relation:
    return Relation("raw_stations", ["id"], [["A"], ["B"]] + [[f"S{i:02d}"] for i in range(count - 2)])


def test_anomaly_checks_warn_publishes_fail_sets_back(project):
    """Decision 1030 on Spark: the detector's SQL inside the measuring query learns from the mart's
    earlier runs (three seeded after the first test's builds); a `warn` volume out of its band is
    recorded and the run publishes; a `fail` volume out of its band sets the entity back (the
    previous version stays) with the sentence, both in one build. The bands by hand, from the loads this test makes (a load is the bronze
    rows now minus at the previous run; band = median +- max(4 * 1.4826 * MAD, 15% of the median,
    10 rows)):

    - reading: build 1 has no previous run, build 3 loaded 3 - 4 = -1 (build 2 was set back: its
      mart row is never learnt from), the seeds 10, 10, 10: median 10, MAD 0, band [0, 20];
    - station: 2 rows on every run, loads 0: median 0, MAD 0, band [-10, 10]; its build 2
      published, and the mart recorded it although reading was set back (decision 0413), so it
      learns from 5 runs at build 4.
    """
    (project.spec_dir / "entities.yml").write_text(ANOMALY_ENTITIES)
    from assay.api import generate_dbt_project

    assert not generate_dbt_project(project.spec_dir, project.path).report.conflicts
    last = {}
    for entity in ("reading", "station"):
        [(run, bronze)] = project.query(
            "select max_by(run_id, run_started_at), max_by(rows_evaluated + rows_deduped, run_started_at) "
            f"from gold.mart_data_quality where entity = '{entity}' and rule = '(entity)'")
        last[entity] = run
        assert bronze == (3 if entity == "reading" else 2)  # the first test's third build
    _seed_history(project, "reading", last["reading"], [13, 23, 33])
    _seed_history(project, "station", last["station"], [2, 2, 2])
    recorded = lambda rid: {r["scope"]: (r["passed"], r["detail"])  # noqa: E731
                            for r in CheckResults(_SparkReader(project), "assay_meta").of_run(rid) if r["kind"] == "anomaly"}

    # 4. One build judges both (two builds cost Spark about 20 s more; a warned run left out of
    #    the later bands is the detector's query, which test_anomalies_on_spark_give_duckdbs_verdicts
    #    runs on a history holding failed runs). reading: 93 bronze rows, a load of 60, above
    #    [0, 20]: `warn`, recorded as not passed, published. station: 13 rows, a load of 11, above
    #    [-10, 10]: `fail`, CHECK_FAILED, the table keeps build 3's rows.
    stations_before = [r[0] for r in project.query("select station_id from silver.station order by station_id")]
    assert stations_before == ["A", "B"]
    project.load_bronze([_stations(13), _hourly("a", 93)])
    proc = project.dbt("build")
    assert proc.returncode != 0
    assert dbtresults.not_ok(project) == {"model.assay_it.station": "error"}
    volume = "loaded 11 rows since the previous run, above the band [-10, 10] learnt from 5 earlier runs (median 0)"
    # the run's own message says the recorded verdict's sentence, word for word
    detail, _candidate = dbtresults.check_failed(project, "model.assay_it.station")
    assert detail == f"VOLUME_ANOMALY: {volume}", detail
    fourth = run_id(project)
    assert [r[0] for r in project.query("select station_id from silver.station order by station_id")] == stations_before
    assert published(project) == [f"a{i:03d}" for i in range(93)]
    assert recorded(fourth) == {
        "reading": (False, "loaded 60 rows since the previous run, above the band [0, 20] learnt from 4 earlier runs "
                                  "(median 10)"),
        "station": (False, volume),
    }


# Issue 18 (decision 1080): on parquet every INSERT INTO a table goes through Hadoop's file
# committer at the table's directory, and two at once shared its one `_temporary` directory: the
# first to commit removed it under the other ("Mkdirs failed to create .../_temporary/...",
# "chmod: cannot access .../_temporary/..."). The nodes below do what the entities and check tasks
# do when they finish together under dbt's two threads: record check results, keep a failing
# check's rows and append events, through the package's own macros, each into the one shared
# table of its kind. Without the package's table options this failed 5 runs of 5 (also when the
# same ALTER set an unrelated option instead, so it is the options, not the statement's timing).
RACE_NODES = 4
RACE_MATERIALIZATION = """{% materialization assay_race, default %}
  {%- set table = this.identifier -%}
  {%- set check = {'check_id': 'RACE', 'position': 1, 'kind': 'row_count', 'enforcement': 'advisory',
                   'columns': [], 'types': {}, 'bounds': {}} -%}
  {%- for i in range(2) -%}
    {%- do assay._record_check_results(none, 'assay_meta', table, [{'check': check, 'passed': true, 'measures': {'rows': i}}]) -%}
  {%- endfor -%}
  {%- set rows = assay._ensure_check_rows(none, 'assay_meta') -%}
  {%- do assay._insert_check_rows(rows, {'run_id': assay.string_literal(invocation_id), 'table_name': assay.string_literal(table),
                                         'check_id': \"'RACE'\"}, \"select 'r' as assay_j\") -%}
  {%- do assay._record_events(none, 'assay_meta', [{'type': 'RACE', 'table': table, 'why': 'issue 18'}]) -%}
  {%- call statement('main') -%}select 1{%- endcall -%}
  {{ return({'relations': []}) }}
{% endmaterialization %}
{% materialization assay_race_tables, default %}
  {#- the three tables exist before the racing nodes start, as the generated meta models make them -#}
  {%- do assay._ensure_check_results(none, 'assay_meta') -%}
  {%- do assay._ensure_check_rows(none, 'assay_meta') -%}
  {%- do assay._record_events(none, 'assay_meta', [{'type': 'RACE', 'table': 'setup', 'why': 'setup'}]) -%}
  {%- call statement('main') -%}select 1{%- endcall -%}
  {{ return({'relations': []}) }}
{% endmaterialization %}
"""


def test_nodes_recording_at_once_share_no_committer_directory(project):
    macro = project.path / "macros" / "assay_race.sql"
    models = project.path / "models" / "assay_race"
    models.mkdir(parents=True)
    macro.write_text(RACE_MATERIALIZATION)
    (models / "assay_race_tables.sql").write_text("{{ config(materialized='assay_race_tables') }}\nselect 1\n")
    for n in range(RACE_NODES):
        (models / f"assay_race_{n}.sql").write_text(
            "{{ config(materialized='assay_race') }}\n-- depends_on: {{ ref('assay_race_tables') }}\nselect 1\n")
    try:
        proc = project.dbt("run", "--select", "assay_race")
    finally:
        for f in models.iterdir():
            f.unlink()
        models.rmdir()
        macro.unlink()
    assert proc.returncode == 0, proc.stdout[-5000:]
    rid = run_id(project)
    where = f"where run_id = '{rid}' and table_name like 'assay_race_%'"
    recorded = project.query(f"select table_name, row_count from assay_meta.assay_check_results {where} order by 1, 2")
    assert recorded == sorted((f"assay_race_{n}", i) for n in range(RACE_NODES) for i in range(2))
    kept = project.query(f"select table_name, row_number, row_json from assay_meta.assay_check_rows {where} order by 1")
    assert kept == [(f"assay_race_{n}", 1, "r") for n in range(RACE_NODES)]
    events = project.query(f"select table_name from assay_meta.assay_events {where} and event_type = 'RACE' order by 1")
    assert events == [(f"assay_race_{n}",) for n in range(RACE_NODES)]
    # each task's own attempt directory goes when it commits; the shared one is never removed
    pending = project.warehouse.directory / "spark-warehouse" / "assay_meta.db" / "assay_check_results" / "_temporary"
    assert [p.name for p in pending.glob("*/_temporary/*")] == []
