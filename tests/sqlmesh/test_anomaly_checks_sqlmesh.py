"""Anomalies judged at build time on the SQLMesh target (issue 20 item 3, decision 1030).

The spec of tests/integration/test_anomaly_checks_dbt.py. The mart model depends on the entity's
last node, so the recorder's measuring query reads the earlier plans' rows only. On the first
plan the mart and the results table have no table behind their names yet: the recorder reads
those parts as empty, and nothing is judged. Four plans: three steady loads, then a load where
7 of the 8 rows are quarantined (above the quarantine rate's band: `fail`, the plan stops through
the blocking audit, which names the check with its sentence) and every name is `x` (the rule's
`warn` is recorded, not passed).
"""

from __future__ import annotations

import json

import pytest

from tests.integration.test_anomaly_checks_dbt import ENTITIES, ITEMS, STEADY
from tests.support.items import bronze, write_spec
from tests.support.sqlmeshfailures import AuditFailure, plan_fails

pytestmark = pytest.mark.slow

# 7 of 8 quarantined, every name x
SPIKE = [("x", "-1")] * 7 + [("x", "8")]


def _results(project, run: str) -> dict:
    rows = project.query("select check_id, kind, enforcement, passed, measures from assay_meta.assay_check_results "
                         f"where run_id = '{run}' and table_name = 'item'")
    return {r[0]: (r[1], r[2], bool(r[3]), json.loads(r[4])) for r in rows}


def test_history_then_a_spike_stops_the_plan(tmp_path, engine):
    from assay.checks.recorded import verdict_of

    project = engine.sqlmesh_project(tmp_path / "project", write_spec(tmp_path, ENTITIES, ITEMS),
                                     f"anomalies_sqlmesh_{engine.id}")
    try:
        loads = []
        plans = []
        for _ in range(3):
            loads.append(STEADY)
            project.load_bronze([bronze(*loads)])
            plans.append(f"SQLMESH_PLAN: {project.plan().plan_id}")
            got = _results(project, plans[-1])
            assert all(r[2] for r in got.values()), got
        first = _results(project, plans[0])
        assert first["VOLUME_ANOMALY"][3]["observed"] is None and first["QUARANTINE_RATE_ANOMALY"][3]["history"] == 0
        third = _results(project, plans[2])
        assert third["QUARANTINE_RATE_ANOMALY"][3]["history"] == 2  # two earlier plans, 3 needed: not judged

        loads.append(SPIKE)
        project.load_bronze([bronze(*loads)])
        failures = plan_fails(project)
        audits = {(f.model_name, f.audit) for f in failures if isinstance(f, AuditFailure)}
        assert ("silver.item", "assay_check__quarantine_rate_anomaly") in audits, failures
        assert ("silver.item", "assay_check__name_not_x_anomaly") not in audits, failures  # warn: not blocking
        want = ("quarantined 7 of 8 evaluated rows, a rate of 0.875, above the band [0, 0.75] learnt from 3 earlier "
                "runs (median 0.125)")
        [failure] = [f for f in failures if isinstance(f, AuditFailure) and f.audit == "assay_check__quarantine_rate_anomaly"]
        assert f"QUARANTINE_RATE_ANOMALY: {want}" in failure.sql.replace("''", "'")
        runs = [r for (r,) in project.query("select distinct run_id from assay_meta.assay_check_results")]
        [plan4] = [r for r in runs if r not in plans]
        got = _results(project, plan4)
        kind, enforcement, passed, measures = got["QUARANTINE_RATE_ANOMALY"]
        assert (kind, enforcement, passed) == ("anomaly", "required", False)
        assert verdict_of(kind, {"bounds": {"metric": "quarantine_rate", "min_history": 3}}, measures).detail == want
        assert got["NAME_NOT_X_ANOMALY"][1:3] == ("advisory", False), got["NAME_NOT_X_ANOMALY"]
        assert got["VOLUME_ANOMALY"][2] is True  # 2 earlier loads: not judged
        # the stopped plan's counts are in the mart too (the mart reads the staged rows); a required check
        # failed in it, so no later build learns from it (tests/cli/test_anomalies_cmd.py)
        assert sorted(r for (r,) in project.query("select distinct run_id from gold.mart_data_quality")) == sorted(plans + [plan4])
    finally:
        project.close()
