"""A `pii` field of an entity that is not opted in to quality, whose value does not cast, stops the
build as before, but with assay's sentence: the engine's own message named the value, and dbt and
SQLMesh printed it (decision 1140; decision 1136's "Not done"). Real `dbt build`s on DuckDB and
PostgreSQL and a real `sqlmesh plan` on DuckDB."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

ENTITY = """\
spec_version: 1
entities:
  person:
    grain: one row per person
    key: [person_id]
    fields:
      person_id: {type: string, required: true}
      age: {type: int, classification: pii}
      born: {type: date, classification: pii}
"""
MAPPING = """\
mapping_version: 1
source: raw_people
target: person
key:
  person_id: {from: "$.id"}
fields:
  age: {from: "$.age"}
  born: {from: "$.born"}
"""
SECRET = "SECRET-77"
SAID = "assay: a value of person.age (a pii field, not shown) is no int"


def _spec(root: Path) -> Path:
    spec = root / "spec"
    spec.mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITY)
    (spec / "people.yml").write_text(MAPPING)
    return spec


def _people(*rows):
    return Relation("raw_people", ["id", "age", "born"], [list(r) for r in rows])


def test_dbt_stops_with_assays_sentence_not_the_value(tmp_path, engine):
    project = engine.dbt_project(tmp_path / "project", _spec(tmp_path), f"private_cast_{engine.id}")
    project.load_bronze([_people(("p1", "41", "1985-02-03"), ("p2", None, None))])
    project.dbt("build", check=True)
    assert sorted(project.query("select person_id, age from silver.person"), key=str) == [("p1", 41), ("p2", None)]
    project.load_bronze([_people(("p1", "41", "1985-02-03"), ("p3", SECRET, "1990-01-01"))])
    built = project.dbt("build")
    out = built.stdout + built.stderr
    assert built.returncode != 0 and SAID in out, out[-3000:]
    assert SECRET not in out
    logs = "".join(p.read_text(errors="replace") for p in (project.path / "logs").glob("*.log"))
    assert SECRET not in logs


def test_sqlmesh_stops_with_assays_sentence_not_the_value(tmp_path):
    from tests.support.sqlmeshfailures import plan_fails
    from tests.support.sqlmeshproject import make_project

    sm = make_project(tmp_path / "sqlmesh", _spec(tmp_path))
    try:
        sm.load_bronze([_people(("p1", "41", "1985-02-03"), ("p3", SECRET, "1990-01-01"))])
        failures = plan_fails(sm)
        said = " ".join(str(f) for f in failures) + " ".join(str(getattr(f, "__cause__", "")) for f in failures)
        assert SAID in said and SECRET not in said, said
    finally:
        sm.close()
