"""`assay plan --data` counts the rows the build after the replays takes out of a child's reject
table, also those it never re-delivered (an outside tester, session 37).

A parent `patient` quarantines p1 (birth year out of range); a child `visit` of p1, still in
bronze, is quarantined as an orphan. p1 ages out of bronze. The NEW spec widens the range: the
replay re-delivers p1, and the build after it admits p1 and, with it, the visit that was never
re-delivered. The plan said of `visit` only what the replay re-delivered (nothing), so a reader
expected fewer rows back than came; it now says how many open rows that build resolves, and the
number equals the real build's (read here by this module's own queries).
"""

from __future__ import annotations

import pytest

from assay.api import generate_dbt_project
from tests.integration.test_plan_data_dbt import _cli
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

SPEC = """\
spec_version: 1
entities:
  patient:
    grain: one row per patient
    key: [patient_id]
    fields:
      patient_id: {type: string, required: true}
      birth_year: {type: int}
    quarantine: {retention: 3650d}
  visit:
    grain: one row per visit
    key: [visit_id]
    fields:
      visit_id: {type: string, required: true}
      patient_id: {type: string}
    quarantine: {retention: 3650d}
    quality:
      - {rule: referential, via: visit_of_patient, on_missing: quarantine}
relationships:
  - {name: visit_of_patient, from: visit, to: patient, via: {patient_id: patient_id}}
"""
PATIENTS = """\
mapping_version: 1
source: raw_patients
target: patient
key:
  patient_id: {from: "$.id"}
fields:
  birth_year:
    from: "$.born"
    quality:
      - {rule: range, min: MIN, max: 2020, on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
VISITS = """\
mapping_version: 1
source: raw_visits
target: visit
key:
  visit_id: {from: "$.id"}
fields:
  patient_id: {from: "$.patient"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
META = ["_load_id", "_ingested_at", "_source_row_id"]


def _spec(path, low: int):
    path.mkdir(parents=True)
    (path / "entities.yml").write_text(SPEC)
    (path / "patients.yml").write_text(PATIENTS.replace("MIN", str(low)))
    (path / "visits.yml").write_text(VISITS)
    return path


def _open(project, entity: str) -> set:
    return {r[0] for r in project.query(f"select _source_row_id from silver.{entity}__reject where resolved_at is null")}


def test_the_rows_a_returning_parent_frees_are_counted(tmp_path):
    old, new = _spec(tmp_path / "old", 1900), _spec(tmp_path / "new", 1850)
    project = make_project(tmp_path / "proj", old)
    day1 = [["l1", "2026-01-01T00:00:00Z", "p1", "P1", "1880"], ["l1", "2026-01-01T00:00:00Z", "p2", "P2", "1990"]]
    visits = [["l1", "2026-01-01T00:00:00Z", "v1", "V1", "P1"], ["l1", "2026-01-01T00:00:00Z", "v2", "V2", "P2"]]
    project.load_bronze([Relation("raw_patients", META + ["id", "born"], day1),
                         Relation("raw_visits", META + ["id", "patient"], visits)])
    project.dbt("build", check=True)
    assert _open(project, "patient") == {"p1"} and _open(project, "visit") == {"v1"}
    # p1 ages out of bronze; its visit stays
    project.load_bronze([Relation("raw_patients", META + ["id", "born"], day1[1:]),
                         Relation("raw_visits", META + ["id", "patient"], visits)])
    project.dbt("build", check=True)

    plan = _cli("plan", str(old), "--spec", str(new), "--project", str(project.path), "--data", "--json")
    assert plan["replay_scope"] == ["patient", "visit"]
    said = {name: plan["data"]["entities"][name]["replay"] for name in ("patient", "visit")}

    # the real steps: generate, build, the replays in the plan's order, the build after them
    assert not generate_dbt_project(new, project.path).report.conflicts
    project.dbt("build", check=True)
    before = {name: _open(project, name) for name in ("patient", "visit")}
    for name in plan["replay_scope"]:
        _cli("replay", name, "--spec", str(new), "--project", str(project.path), "--json")
    project.dbt("build", check=True)
    after = {name: _open(project, name) for name in ("patient", "visit")}

    assert (said["patient"]["redelivered"], said["visit"]["redelivered"]) == (1, 0)
    for name in ("patient", "visit"):
        left = len(before[name] - after[name])
        assert said[name]["leave_reject"] == {"admitted": left, "deduped": 0}, (name, said[name])
    assert said["visit"]["leave_reject"]["admitted"] == 1  # v1, freed by p1's return, never re-delivered
    assert project.query("select visit_id from silver.visit order by 1") == [("V1",), ("V2",)]
