"""Change since the last run on the SQLMesh target, DuckDB and PostgreSQL (issue 20 item 2, decision 0981).

The spec and the three loads of tests/integration/test_change_thresholds_dbt.py. The mart model
depends on the entity's last node, so it is evaluated after the entity's recorder: the measuring
query reads the earlier plans' rows only (and excludes its own run id besides). On the first plan
the mart's name has no table behind it yet: the recorder reads that part as empty, and every
change limit passes, saying it was not judged. A `warn` breach (NAME_NOT_X_INCREASE) applies with
the audit's warning; a `fail` breach (QUARANTINE_INCREASE) fails the plan through its blocking
audit, naming it with the sentence, and the result is recorded under the plan's run id.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.test_change_thresholds_dbt import ENTITIES, ITEMS, LOAD1, LOAD2, LOAD3
from tests.support.items import bronze, write_spec
from tests.support.sqlmeshfailures import AuditFailure, plan_fails

pytestmark = pytest.mark.slow


def _results(project, run: str) -> dict:
    rows = project.query("select check_id, kind, enforcement, passed, measures from assay_meta.assay_check_results "
                         f"where run_id = '{run}' and table_name = 'item'")
    return {r[0]: (r[1], r[2], bool(r[3]), json.loads(r[4])) for r in rows}


def test_first_plan_not_judged_warn_applies_fail_stops(tmp_path, engine):
    # DuckDB and PostgreSQL 18 (tests/conftest.py: the engines of a module that does not keep PG15)
    project = engine.sqlmesh_project(tmp_path / "project", write_spec(tmp_path, ENTITIES, ITEMS), f"changes_sqlmesh_{engine.id}")
    try:
        project.load_bronze([bronze(LOAD1)])
        plan1 = f"SQLMESH_PLAN: {project.plan().plan_id}"
        got = _results(project, plan1)
        assert got["QUARANTINE_INCREASE"] == ("quarantine_increase", "required", True, {
            "evaluated": 8, "failing": 1, "previous_evaluated": None, "previous_failing": None, "previous_run": None,
            "rows": 7})
        assert got["VOLUME_CHANGE"][2] is True and got["NAME_NOT_X_INCREASE"][2] is True

        project.load_bronze([bronze(LOAD1, LOAD2)])
        plan2 = f"SQLMESH_PLAN: {project.plan().plan_id}"
        got = _results(project, plan2)
        assert got["NAME_NOT_X_INCREASE"] == ("rule_increase", "advisory", False, {
            "evaluated": 8, "failing": 3, "previous_failing": 1, "previous_run": plan1, "rows": 7})
        assert got["QUARANTINE_INCREASE"][2] is True
        assert got["VOLUME_CHANGE"][3] == {"bronze": 16, "previous_bronze": 8, "earlier_bronze": None,
                                           "previous_run": plan1, "earlier_run": None, "rows": 7}

        project.load_bronze([bronze(LOAD1, LOAD2, LOAD3)])
        failures = plan_fails(project)
        audits = {(f.model_name, f.audit) for f in failures if isinstance(f, AuditFailure)}
        assert ("silver.item", "assay_check__quarantine_increase") in audits, failures
        [failure] = [f for f in failures if isinstance(f, AuditFailure) and f.audit == "assay_check__quarantine_increase"]
        assert (f"QUARANTINE_INCREASE: quarantined 20 of 30 evaluated rows, a rate of 0.6667, against 0.125 (1 of 8) in "
                f"the previous successful run {plan2}: above both 0.25") in failure.sql.replace("''", "'")
        runs = [r for (r,) in project.query("select distinct run_id from assay_meta.assay_check_results")]
        [plan3] = [r for r in runs if r not in (plan1, plan2)]
        got = _results(project, plan3)
        assert got["QUARANTINE_INCREASE"] == ("quarantine_increase", "required", False, {
            "evaluated": 30, "failing": 20, "previous_evaluated": 8, "previous_failing": 1, "previous_run": plan2,
            "rows": 10})
        assert got["VOLUME_CHANGE"][2:] == (False, {"bronze": 46, "previous_bronze": 16, "earlier_bronze": 8,
                                                    "previous_run": plan2, "earlier_run": plan1, "rows": 10})
    finally:
        project.close()
