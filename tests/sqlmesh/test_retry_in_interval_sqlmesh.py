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

from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, rule_name, write_spec

pytestmark = pytest.mark.slow


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

    # meter: a required check of at least two rows, judged on the entity; `site` not null, a fail rule
    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    rule = rule_name(sm)
    try:
        sm.load_bronze([meters("M1", "M2", "M3")])
        sm.plan()

        # run 2: one meter left breaks the entity's required check, judged after the entity is written
        sm.load_bronze([meters("M1")])
        assert not sm.run()
        run2 = latest_run(sm)
        assert results(sm, run2) == {"ENOUGH_METERS": False}

        # run 3, the same interval: a load of four meters, one the fail rule diverts. SQLMesh
        # evaluates only the entity, from staged as run 2 wrote it (1 row; bronze now 4): judged
        # again on that data, every result recorded, no false CONSERVATION.
        sm.load_bronze([meters("M1", "M2", "M3", "M5", without_site=("M5",))])
        assert not sm.run(advance=False)
        run3 = latest_run(sm)
        assert run3 != run2
        assert results(sm, run3) == {"ENOUGH_METERS": False}, results(sm, run3)
        assert conservation_stops(sm) == []

        # run 4, the next interval: staged reads the new load first and the fail rule stops it
        assert not next_interval(sm)
        stops = sm.query("select distinct run_id from assay_meta.assay_events "
                         f"where event_type = 'CHECK_FAILED' and check_name = '{rule}'")
        assert len(stops) == 1 and stops[0][0] not in (run2, run3), stops
        assert conservation_stops(sm) == []

        # run 5: the data is fixed; everything passes and the entity is published
        sm.load_bronze([meters("M1", "M2", "M3")])
        assert next_interval(sm)
        run5 = latest_run(sm)
        assert results(sm, run5) == {"ENOUGH_METERS": True}, results(sm, run5)
        assert [r[0] for r in sm.query("select meter_id from silver.meter order by 1")] == ["M1", "M2", "M3"]
    finally:
        sm.close()
