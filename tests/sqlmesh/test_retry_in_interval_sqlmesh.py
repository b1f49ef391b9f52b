"""A SQLMesh run retried inside the interval of a run an entity's check stopped (decision 0946).

SQLMesh 0.236 keeps intervals per model: when a blocking check of the entity stops a run, the
staged and reject models have already completed the interval, so the next `sqlmesh run` in that
interval evaluates the entity alone, from the staged table as the failed run wrote it, while
bronze may have grown since. The conservation law counted bronze as it is now and failed on that
retry (an outside tester's `CONSERVATION: FAILED: bronze_rows 35, staged_rows 32`), hiding every
other result. It now counts bronze as the staged model read it: the retry judges the interval's
data again, consistently, and records every result; the new load is judged at the next interval,
staged first, and a fixing load publishes.

Real plans and runs of SQLMesh on DuckDB.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  meter:
    grain: one row per meter
    key: [meter_id]
    fields:
      meter_id: {type: string, required: true}
      site: {type: string}
    quarantine: {retention: 90d}
    checks:
      - {check_id: few_meters, kind: row_expectation, enforcement: required, max_rows: 3}
"""
MAPPING = """\
mapping_version: 1
source: raw_meters
target: meter
key:
  meter_id: {from: "$.id"}
fields:
  site:
    from: "$.site"
    quality:
      - {rule: not_null, on_fail: fail}
unmapped: [$._source_row_id, $._load_id, $._ingested_at]
"""


def meters(load: int, *ids: str, without_site: tuple[str, ...] = ()):
    from tests.support.corpus import Relation

    return Relation("raw_meters", ["id", "site", "_source_row_id", "_load_id", "_ingested_at"],
                    [[i, None if i in without_site else f"S-{i}", i, f"L{load}", f"2024-01-0{load} 00:00:00"]
                     for i in ids])


def results(sm, run: str) -> dict[str, bool]:
    rows = sm.query("select check_id, passed from assay_meta.assay_check_results "
                    f"where table_name = 'meter' and run_id = '{run}'")
    return dict(rows)


def latest_run(sm) -> str:
    return sm.query("select run_id from assay_meta.assay_check_results where table_name = 'meter' "
                    "order by recorded_at desc limit 1")[0][0]


def next_interval(sm) -> bool:
    """`sqlmesh run` one day later, the window ending there: SQLMesh bounds a run's window by
    `end`, which defaults to the wall clock, not to the execution time (decision 0946)."""
    from datetime import timedelta

    sm.clock += timedelta(days=1)
    return sm.context().run(execution_time=sm.clock, end=sm.clock).is_success


def conservation_stops(sm) -> list:
    return sm.query("select run_id from assay_meta.assay_events where check_name = 'CONSERVATION'")


def test_a_retry_in_the_interval_is_judged_on_what_staged_read_and_the_next_interval_recovers(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "meters.yml").write_text(MAPPING)
    sm = make_project(tmp_path / "sqlmesh", spec)
    rule = next((sm.path / "models").rglob("meter__staged.sql")).read_text().split("rule_name := '")[1].split("'")[0]
    try:
        sm.load_bronze([meters(1, "M1", "M2", "M3")])
        sm.plan()

        # run 2: a fourth meter breaks the entity's required check, judged after the entity is written
        sm.load_bronze([meters(2, "M1", "M2", "M3", "M4")])
        assert not sm.run()
        run2 = latest_run(sm)
        assert results(sm, run2)["FEW_METERS"] is False

        # run 3, the same interval: a load that drops M4 and adds two meters, one the fail rule diverts.
        # SQLMesh evaluates only the entity, from staged as run 2 wrote it (4 rows, bronze now 5
        # rows): judged again on that data, every result recorded, no false CONSERVATION.
        sm.load_bronze([meters(3, "M1", "M2", "M3", "M5", "M6", without_site=("M5",))])
        assert not sm.run(advance=False)
        run3 = latest_run(sm)
        assert run3 != run2
        assert results(sm, run3) == {"FEW_METERS": False}, results(sm, run3)
        assert conservation_stops(sm) == []

        # run 4, the next interval: staged reads the new load first and the fail rule stops it
        assert not next_interval(sm)
        stops = sm.query("select distinct run_id from assay_meta.assay_events "
                         f"where event_type = 'CHECK_FAILED' and check_name = '{rule}'")
        assert len(stops) == 1 and stops[0][0] not in (run2, run3), stops
        assert conservation_stops(sm) == []

        # run 5: the data is fixed; everything passes and the entity is published
        sm.load_bronze([meters(4, "M1", "M2", "M3")])
        assert next_interval(sm)
        run5 = latest_run(sm)
        assert results(sm, run5) == {"FEW_METERS": True}, results(sm, run5)
        assert [r[0] for r in sm.query("select meter_id from silver.meter order by 1")] == ["M1", "M2", "M3"]
    finally:
        sm.close()
