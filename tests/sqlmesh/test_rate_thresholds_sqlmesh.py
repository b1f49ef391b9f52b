"""Rate thresholds on the SQLMesh target, DuckDB and PostgreSQL (issue 20 item 1, decision 0980).

The spec and the three loads of tests/integration/test_rate_thresholds_dbt.py: a plan whose
rates hold applies; a `fail` breach (QTY_RANGE_MIN_RATE) fails the plan through its blocking
audit, naming it, with the result recorded under the plan's run id and the same sentence as on
dbt; a `warn` breach only (NAME_NOT_X_RATE) applies with a non-blocking audit's warning. The
rates count the staged table this plan wrote (not the virtual layer's view of the previous plan).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_rate_thresholds_dbt import ENTITIES, ITEMS, LOAD1, LOAD2, LOAD3
from tests.support.items import one_load, write_spec
from tests.support.sqlmeshfailures import AuditFailure, plan_fails, planned_with_warnings

pytestmark = pytest.mark.slow


def _results(project, run: str) -> dict:
    rows = project.query("select check_id, kind, enforcement, passed, measures from assay_meta.assay_check_results "
                         f"where run_id = '{run}' and table_name = 'item'")
    return {r[0]: (r[1], r[2], bool(r[3]), json.loads(r[4])) for r in rows}


def test_fail_breach_stops_the_plan_and_warn_applies(tmp_path, engine):
    # DuckDB and PostgreSQL 18 (tests/conftest.py: the engines of a module that does not keep PG15)
    project = engine.sqlmesh_project(tmp_path / "project", write_spec(tmp_path, ENTITIES, ITEMS), f"rates_sqlmesh_{engine.id}")
    try:
        project.load_bronze([one_load("l1", LOAD1)])
        plan1 = f"SQLMESH_PLAN: {project.plan().plan_id}"
        got = _results(project, plan1)
        assert got["QUARANTINE_RATE"] == ("quarantine_rate", "advisory", True, {"evaluated": 8, "failing": 2, "rows": 6})
        assert got["QTY_RANGE_MIN_RATE"][1:3] == ("required", True)
        assert got["NAME_NOT_X_RATE"][2:] == (True, {"evaluated": 8, "failing": 2, "rows": 6})

        project.load_bronze([one_load("l2", LOAD2)])
        failures = plan_fails(project)
        audits = {(f.model_name, f.audit) for f in failures if isinstance(f, AuditFailure)}
        assert audits == {("silver.item", "assay_check__qty_range_min_rate")}, failures
        [failure] = [f for f in failures if isinstance(f, AuditFailure)]
        assert ("QTY_RANGE_MIN_RATE: rule 'qty_range_min' fired on 3 of 8 evaluated rows, a rate of 0.375, above the "
                "declared maximum of 0.25") in failure.sql.replace("''", "'")
        runs = [r for (r,) in project.query("select distinct run_id from assay_meta.assay_check_results")]
        [plan2] = [r for r in runs if r != plan1]
        got = _results(project, plan2)
        # counted on the staged table this plan wrote: 3 of the 8 rows of load 2
        assert got["QTY_RANGE_MIN_RATE"] == ("rule_rate", "required", False, {"evaluated": 8, "failing": 3, "rows": 5})
        assert got["QUARANTINE_RATE"][2] is False  # breached, advisory: its audit only warns

        project.load_bronze([one_load("l3", LOAD3)])
        plan3, warned = planned_with_warnings(project)
        got = _results(project, plan3)
        assert got["NAME_NOT_X_RATE"] == ("rule_rate", "advisory", False, {"evaluated": 8, "failing": 3, "rows": 7})
        # its audit returns its result once per row the rate counted, as check list shows them
        # (decisions 0945, 0949): the rule fired on 3 rows
        assert "'assay_check__name_not_x_rate' audit error: 3 rows failed" in warned
        published = [r[0] for r in project.query("select item_id from silver.item order by item_id")]
        assert published == ["i1", "i2", "i3", "i4", "i6", "i7", "i8"]

        # A repeated key stops the plan at the staged model's key audit, before the entity: the
        # staged model's own recorder (decision 0921) counts the rates over the table it wrote.
        repeated = one_load("l4", LOAD1)
        repeated.rows.append(["l4", "2026-02-04T08:00:00Z", "l4-9", "i1", "a", "1"])
        project.load_bronze([repeated])
        failures = plan_fails(project)
        assert {f.audit for f in failures if isinstance(f, AuditFailure)} == {"assay_key_unique"}, failures
        runs = [r for (r,) in project.query("select distinct run_id from assay_meta.assay_check_results")]
        [plan4] = [r for r in runs if r not in (plan1, plan2, plan3)]
        got = _results(project, plan4)
        assert got["QUARANTINE_RATE"][2:] == (True, {"evaluated": 9, "failing": 2, "rows": 7})
        assert got["QTY_RANGE_MIN_RATE"][2:] == (True, {"evaluated": 9, "failing": 2, "rows": 7})
        project.close()  # the CLI opens the warehouse read-only
        res = CliRunner().invoke(cli, ["checks", plan2, "--project", str(project.path)])
        assert res.exit_code == 2, res.output
        assert ("item: QTY_RANGE_MIN_RATE: FAILED: rule 'qty_range_min' fired on 3 of 8 evaluated rows, a rate of "
                "0.375, above the declared maximum of 0.25") in res.stdout
    finally:
        project.close()
