"""What a set-back plan leaves in the reject table on SQLMesh (decision 0944), on DuckDB.

The spec and loads of tests/integration/test_setback_rejects_dbt.py. A plan sets the entity back on
SQLMesh when it builds a new version of it (a `sqlmesh run`, or a plan that does not change the
entity, evaluates it in place: its rows are published, failing, decision 0932). So the second plan
brings the second load together with a changed floor of the limit: the entity is a new version,
QUARANTINE_INCREASE fails its blocking audit and the view stays on the first version. The reject
model ran before the entity, and SQLMesh keeps what it wrote: the 20 diversions and the resolution
of l1-3 (its key went to a newer row), each naming the plan. `assay report` counts them apart
and says both. The third plan (the corrected re-delivery) publishes and resolves the 20 rows.
"""

from __future__ import annotations

import pytest

from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_setback_rejects_dbt import BAD, ENTITIES, ITEMS, LOAD1, LOAD2, LOAD3, bronze, latest
from tests.integration.test_setback_rejects_dbt import report as dbt_report
from tests.support.items import write_spec
from tests.support.sqlmeshfailures import AuditFailure, plan_fails
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow


def rejects(project) -> dict[str, tuple]:
    """{_source_row_id: (open, resolution, last_run_id)}."""
    return {r[0]: (bool(r[1]), r[2], r[3]) for r in project.query(
        "select _source_row_id, resolved_at is null, resolution, last_run_id from silver.item__reject")}


def report(project, spec) -> dict:
    """`assay report`'s entry of `item`, once SQLMesh's connection is closed (DuckDB allows one
    writer per file; the next plan opens a fresh Context)."""
    project.close()
    return dbt_report(project, spec)


def published(project) -> list[str]:
    return [r[0] for r in project.query("select item_id from silver.item order by item_id")]


def test_a_set_back_plans_rejects_name_it_and_the_next_plan_takes_them_over(tmp_path):
    from assay.api_sqlmesh import generate_sqlmesh_project

    spec = write_spec(tmp_path, ENTITIES, ITEMS)
    project = make_project(tmp_path / "proj", spec, engine="duckdb")
    try:
        project.load_bronze([bronze(LOAD1)])
        plan1 = f"SQLMESH_PLAN: {project.plan().plan_id}"
        before = published(project)
        assert before == ["i1", "i2", "i4", "i5", "i6", "i7", "i8"]
        assert rejects(project) == {"l1-3": (True, None, plan1)}

        # 2. the second load with a new version of the entity (another floor): set back
        (spec / "entities.yml").write_text(ENTITIES.replace("floor: 2", "floor: 3"))
        generate_sqlmesh_project(spec, project.path, dialect="duckdb")
        project.context(fresh=True)
        project.load_bronze([bronze(LOAD1, LOAD2)])
        failures = plan_fails(project)
        assert {(f.model_name, f.audit) for f in failures if isinstance(f, AuditFailure)} == {
            ("silver.item", "assay_check__quarantine_increase")}, failures
        assert published(project) == before
        got = report(project, spec)
        plan2 = got["outcome"]["run"]
        assert got["outcome"]["state"] == "set_back" and plan2 not in (None, plan1)
        # the plan staged i1's newer delivery and was set back: the published row is load 1's (read while
        # SQLMesh's connection is closed, as the report was)
        said = CliRunner().invoke(cli, ["explain", "item", "i1", "--project", str(project.path), "--spec", str(spec)])
        assert ("The last build kept its delivery l2-1 (load l2), but the published table holds delivery l1-1 of load "
                "l1 (the last build was not published). 0 open reject rows.") in said.output, said.output
        # the reject model's writes stay, naming the plan: 20 diverted, l1-3 resolved (deduped)
        # although the published entity is the first version's
        assert rejects(project) == {"l1-3": (False, "deduped", plan2), **{s: (True, None, plan2) for s in BAD}}
        assert latest(got) == (plan2, 38, 10, 20, 8)
        assert got["unpublished_builds"] == [plan2]
        assert got["rejects"]["open"] == 20
        assert got["rejects"]["unpublished"] == {"runs": [plan2], "open": 20, "resolved": 1}
        by = f"run {plan2}, a build whose entity was not published"
        assert [r for r in got["health"]["reasons"] if by in r] == [
            f"20 open reject rows were last judged by {by}; the published version of the entity was built before "
            "that judgement, and the next build that publishes judges them again",
            f"1 reject row was resolved by {by}: the published table does not hold what it admitted until a build "
            "publishes it"]
        # 3. the corrected re-delivery: published, the 20 rows resolved by it
        project.load_bronze([bronze(LOAD1, LOAD2, LOAD3)])
        plan3 = f"SQLMESH_PLAN: {project.plan().plan_id}"
        assert published(project) == sorted(f"i{n}" for n in range(1, 31))
        assert rejects(project) == {"l1-3": (False, "deduped", plan2), **{s: (False, "admitted", plan3) for s in BAD}}
        got = report(project, spec)
        assert got["outcome"]["state"] == "published"
        assert latest(got) == (plan3, 58, 30, 0, 28)
        assert (got["unpublished_builds"], got["rejects"]["open"], got["rejects"]["unpublished"]) == ([], 0, None)
    finally:
        project.close()
