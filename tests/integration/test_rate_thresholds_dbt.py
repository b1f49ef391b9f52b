"""Rate thresholds (issue 20 item 1, decision 0980) on real dbt builds, DuckDB (PostgreSQL: the end of the module).

One entity, `item`, states an entity-level `max_quarantine_rate` (fail) and `max_flag_rate`
(warn), and two rules state their own `max_rate` (a field rule, fail; an expression rule, warn).
Three loads:

1. clean enough: every rate at or below its limit; published; `assay checks` exit 0;
2. the quarantine rate goes above its limit (`fail`): the entity is set back (the previous version
   stays, TABLE_ROLLED_BACK recorded), the result is recorded with the sentence, `assay checks`
   exits 2 and prints it;
3. only the flag rate and the flag rule's rate go above their limits (`warn`): published, the
   failed advisory results recorded, `assay checks` exit 2.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.dbtproject import make_project
from tests.support.items import MAPPING, fill, checks, one_load, published, run_id, write_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("rate thresholds built by dbt; in the fast loop sqlmesh/test_rate_thresholds_sqlmesh.py builds the same spec and loads on DuckDB, and checks/test_rates.py runs the measuring query dbt runs"),
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
    thresholds: {max_quarantine_rate: "0.25", max_flag_rate: 0.5, min_rows: 4, on_breach: warn}
    quality:
      - {rule: expression, name: name_not_x, expr: "name <> 'x'", on_fail: flag, max_rate: "0.25", on_breach: warn}
    checks:
      - {check_id: enough_rows, kind: row_expectation, enforcement: advisory, min_rows: 1}
"""
# The shared item mapping (tests/support/items.py), its range rule with a rate limit.
ITEMS = fill(MAPPING, range_limit=', max_rate: "0.25", on_breach: fail, min_rows: 4')


# load 1: 8 rows, 2 quarantined (qty < 0) = 0.25 exactly, 2 flagged = 0.25 exactly: all pass
LOAD1 = [("a", "1"), ("b", "2"), ("x", "3"), ("x", "4"), ("c", "-1"), ("d", "-2"), ("e", "5"), ("f", "6")]
# load 2: 8 rows, 3 quarantined = 0.375 > 0.25: QTY_RANGE_MIN_RATE (fail) sets the entity back
LOAD2 = [("a", "1"), ("b", "2"), ("x", "3"), ("g", "4"), ("c", "-1"), ("d", "-2"), ("e", "-5"), ("f", "6")]
# load 3: 8 rows, 1 quarantined, 3 flagged = 0.375 > 0.25 (NAME_NOT_X_RATE, warn) but the
# flag rate 3/8 <= 0.5: published with one failed advisory result
LOAD3 = [("a", "1"), ("x", "2"), ("x", "3"), ("x", "4"), ("c", "-1"), ("d", "2"), ("e", "5"), ("f", "6")]


class Thresholds:
    def test_fail_sets_back_and_warn_publishes(self, project):
        project.load_bronze([one_load("l1", LOAD1)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        run1 = run_id(project)
        code, results, _ = checks(project, run1)
        assert code == 0, results
        assert results["QTY_RANGE_MIN_RATE"]["detail"] == (
            "rule 'qty_range_min' fired on 2 of 8 evaluated rows, a rate of 0.25, at or below the declared maximum of 0.25")
        assert results["QUARANTINE_RATE"]["detail"] == (
            "quarantined 2 of 8 evaluated rows, a rate of 0.25, at or below the declared maximum of 0.25")
        assert results["FLAG_RATE"]["detail"] == (
            "flagged 2 of 8 evaluated rows, a rate of 0.25, at or below the declared maximum of 0.5")
        assert results["NAME_NOT_X_RATE"]["passed"] is True
        before = published(project)
        assert before == ["i1", "i2", "i3", "i4", "i7", "i8"]

        # 2. a fail breach: set back, the previous version stays
        project.load_bronze([one_load("l2", LOAD2)])
        proc = project.dbt("build")
        assert proc.returncode != 0, proc.stdout[-5000:]
        assert "QTY_RANGE_MIN_RATE" in proc.stdout
        run2 = run_id(project)
        assert published(project) == before
        code, results, text = checks(project, run2)
        assert code == 2
        want = ("rule 'qty_range_min' fired on 3 of 8 evaluated rows, a rate of 0.375, above the declared maximum "
                "of 0.25")
        assert (results["QTY_RANGE_MIN_RATE"]["passed"], results["QTY_RANGE_MIN_RATE"]["detail"]) == (False, want)
        assert f"item: QTY_RANGE_MIN_RATE: FAILED: {want}" in text
        # the entity-level quarantine rate breaches too, but it only warns
        assert results["QUARANTINE_RATE"]["passed"] is False
        events = project.query("select event_type, table_name, check_name, why from assay_meta.assay_events "
                               f"where run_id = '{run2}' order by event_type, check_name")
        got = CliRunner().invoke(cli, ["table", "get", "item", "--project", str(project.path),
                                       "--spec", str(project.path.parent / "spec")])
        assert got.exit_code == 2 and "set back by the latest build" in got.stdout, got.output
        assert ("TABLE_ROLLED_BACK", "item", "QTY_RANGE_MIN_RATE", "previous_version_kept") in [
            (e[0], e[1], e[2], e[3]) for e in events], events

        # 3. a warn breach only: published, the failed advisory result recorded
        project.load_bronze([one_load("l3", LOAD3)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        run3 = run_id(project)
        assert published(project) == ["i1", "i2", "i3", "i4", "i6", "i7", "i8"]
        code, results, _ = checks(project, run3)
        assert code == 2
        assert (results["NAME_NOT_X_RATE"]["passed"], results["NAME_NOT_X_RATE"]["detail"]) == (
            False, "rule 'name_not_x' fired on 3 of 8 evaluated rows, a rate of 0.375, above the declared maximum of 0.25")
        assert results["FLAG_RATE"]["passed"] is True
        assert results["QTY_RANGE_MIN_RATE"]["passed"] is True
        recorded = project.query("select check_id, kind, enforcement, passed, measures from assay_meta.assay_check_results "
                                 f"where run_id = '{run3}' and check_id = 'NAME_NOT_X_RATE'")
        assert [(r[0], r[1], r[2], bool(r[3])) for r in recorded] == [("NAME_NOT_X_RATE", "rule_rate", "advisory", False)]
        assert {k: v for k, v in json.loads(recorded[0][4]).items()} == {"evaluated": 8, "failing": 3, "rows": 7}


class TestThresholdsDuckDB(Thresholds):
    @pytest.fixture
    def project(self, tmp_path):
        return make_project(tmp_path / "proj", write_spec(tmp_path, ENTITIES, ITEMS), engine="duckdb")


# Not run again on PostgreSQL since session 31 (the suite's time): the same lowered measuring query is
# spelled for PostgreSQL by SQLMesh in tests/sqlmesh/test_rate_thresholds_sqlmesh.py (pg18), and the
# dbt package's PostgreSQL spelling of a measuring query and of the history it reads runs in
# test_declared_checks_dbt and test_anomaly_shift_dbt there.
