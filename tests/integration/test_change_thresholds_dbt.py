"""Change since the last run (issue 20 item 2, decision 0981) on real dbt builds, DuckDB (PostgreSQL: the end of the module).

One entity, `item`, states `max_increase` on its quarantine rate (fail) and `max_volume_change`
(warn) in `thresholds:`, and its flag rule states its own `max_increase` (warn). Three loads:

1. the first build: nothing earlier is recorded, every change limit passes saying it was not judged;
2. the flag rule fires on 3 rows after 1 (above both 1 x 2 and 1 + 1): a warn breach, published;
   the volume has no previous load yet (one earlier run);
3. a spike: 20 of 30 rows quarantined after 1 of 8 (fail: set back, the previous version stays,
   `assay checks` exits 2 with the sentence) and 30 bronze rows loaded after 8 (warn).

The mart is built after the entity, so each measuring query reads the earlier runs only.
"""

from __future__ import annotations

import json

import pytest

from tests.support import dbtresults
from tests.support.dbtproject import make_project
from tests.support.items import MAPPING, fill, bronze, checks, published, run_id, write_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("change limits built by dbt; in the fast loop sqlmesh/test_change_thresholds_sqlmesh.py builds the same spec and loads on DuckDB, and checks/test_increases.py runs dbt's measuring query over hand-made earlier runs"),
]

ENTITIES = """\
spec_version: 1
entities:
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      name: {type: string}
      qty: {type: int}
    quarantine: {retention: 30d}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    thresholds:
      max_increase: {factor: "2", floor: 2, on_breach: fail}
      max_volume_change: {factor: "3", floor: 4, on_breach: warn}
    quality:
      - {rule: expression, name: name_not_x, expr: "name <> 'x'", on_fail: flag,
         max_increase: {factor: "2", floor: 1, on_breach: warn}}
"""
# The shared item mapping (tests/support/items.py), its range rule without a limit.
ITEMS = fill(MAPPING, range_limit='')


# 8 rows: 1 quarantined, 1 flagged
LOAD1 = [("a", "1"), ("b", "2"), ("x", "3"), ("d", "4"), ("c", "-1"), ("e", "5"), ("f", "6"), ("g", "7")]
# the same 8 keys: 1 quarantined, 3 flagged
LOAD2 = [("a", "1"), ("x", "2"), ("x", "3"), ("x", "4"), ("c", "-1"), ("e", "5"), ("f", "6"), ("g", "7")]
# 30 keys: 20 quarantined, 3 flagged
LOAD3 = [("x", "1"), ("x", "2"), ("x", "3")] + [("n", "-1")] * 20 + [("n", "5")] * 7


class Changes:
    def test_first_run_warn_then_fail_sets_back(self, project):
        project.load_bronze([bronze(LOAD1)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        run1 = run_id(project)
        code, results, _ = checks(project, run1)
        assert code == 0, results
        assert results["QUARANTINE_INCREASE"]["detail"] == (
            "quarantined 1 of 8 evaluated rows; no earlier successful run of the entity is recorded, so the increase "
            "of the quarantine rate is not judged against the declared factor 2 and floor of 2 rows")
        assert results["NAME_NOT_X_INCREASE"]["passed"] is True
        assert "not judged" in results["VOLUME_CHANGE"]["detail"]

        # 2. the flag rule triples (warn): published, the failed advisory result recorded
        project.load_bronze([bronze(LOAD1, LOAD2)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        run2 = run_id(project)
        code, results, text = checks(project, run2)
        assert code == 2
        want = (f"rule 'name_not_x' fired on 3 rows, against 1 in the previous successful run {run1}: above both "
                "1 x 2 = 2 (the declared factor) and 1 + 1 = 2 (the declared floor)")
        assert (results["NAME_NOT_X_INCREASE"]["passed"], results["NAME_NOT_X_INCREASE"]["detail"]) == (False, want)
        assert f"item: NAME_NOT_X_INCREASE: warned: {want}" in text  # on_breach: warn (decision 0949)
        assert results["QUARANTINE_INCREASE"]["passed"] is True
        assert results["VOLUME_CHANGE"]["detail"] == (
            f"loaded 8 rows since the previous successful run {run1} (bronze rows 8 -> 16); only one earlier "
            "successful run is recorded, so there is no previous load to compare with, and the volume is not judged "
            "against the declared factor 3 and floor of 4 rows")
        before = published(project)
        assert before == ["i1", "i2", "i3", "i4", "i6", "i7", "i8"]

        # 3. a spike: the quarantine rate (fail) sets the entity back, the volume (warn) is recorded
        project.load_bronze([bronze(LOAD1, LOAD2, LOAD3)])
        proc = project.dbt("build")
        assert proc.returncode != 0, proc.stdout[-5000:]
        assert "QUARANTINE_INCREASE" in proc.stdout
        run3 = run_id(project)
        assert published(project) == before
        code, results, text = checks(project, run3)
        assert code == 2
        want = (f"quarantined 20 of 30 evaluated rows, a rate of 0.6667, against 0.125 (1 of 8) in the previous "
                f"successful run {run2}: above both 0.25 (the previous rate x the declared factor 2) and, by 16.25 rows "
                "of this run's 30, the previous rate plus the declared floor of 2 rows")
        assert (results["QUARANTINE_INCREASE"]["passed"], results["QUARANTINE_INCREASE"]["detail"]) == (False, want)
        assert f"item: QUARANTINE_INCREASE: FAILED: {want}" in text
        # dbt's own error says the same sentence as `assay checks` (one wording, held in Python)
        assert dbtresults.check_failed(project, "model.assay_it.item")[0].startswith(f"QUARANTINE_INCREASE: {want}")
        assert (results["VOLUME_CHANGE"]["passed"], results["VOLUME_CHANGE"]["detail"]) == (False, (
            f"loaded 30 rows since the previous successful run {run2} (bronze rows 16 -> 46), against 8 rows loaded "
            f"between run {run1} and run {run2}: above both 8 x 3 = 24 (the declared factor) and 8 + 4 = 12 "
            "(the declared floor)"))
        assert results["NAME_NOT_X_INCREASE"]["passed"] is True
        events = project.query("select event_type, check_name, why from assay_meta.assay_events "
                               f"where run_id = '{run3}' and event_type = 'TABLE_ROLLED_BACK'")
        assert [tuple(e) for e in events] == [("TABLE_ROLLED_BACK", "QUARANTINE_INCREASE", "previous_version_kept")]
        recorded = project.query("select kind, enforcement, measures from assay_meta.assay_check_results "
                                 f"where run_id = '{run3}' and check_id = 'QUARANTINE_INCREASE'")
        assert [(r[0], r[1]) for r in recorded] == [("quarantine_increase", "required")]
        assert json.loads(recorded[0][2]) == {"evaluated": 30, "failing": 20, "previous_evaluated": 8,
                                              "previous_failing": 1, "previous_run": run2, "rows": 10}


class TestChangesDuckDB(Changes):
    @pytest.fixture
    def project(self, tmp_path):
        return make_project(tmp_path / "proj", write_spec(tmp_path, ENTITIES, ITEMS), engine="duckdb")


# Not run again on PostgreSQL since session 31 (the suite's time): the same lowered measuring query is
# spelled for PostgreSQL by SQLMesh in tests/sqlmesh/test_change_thresholds_sqlmesh.py (pg18), and the
# dbt package's PostgreSQL spelling of a measuring query and of the history it reads runs in
# test_declared_checks_dbt and test_anomaly_shift_dbt there.
