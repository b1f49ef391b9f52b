"""A type-2 field whose type the spec changes (decision 1139; an outside tester, session 41).

dbt's snapshot never changes a stored column's type: after `seats: int` became `decimal(5,1)` a
delivered 40.5 was written into the history's BIGINT column as 41, and a version opened for a
change the data never made, with the build passing. Now the history's column takes the spec's
type before the versions are compared; a stored value the new type cannot hold stops the node,
counted, never shown. Real `dbt build`s on DuckDB and PostgreSQL."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from assay.api import generate_dbt_project
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow
# PostgreSQL 15 reads a value through the UDF install_functions() creates, 16 and later through
# pg_input_is_valid: both paths of the unreadable-value count
PG15 = True

ENTITY = """\
spec_version: 1
entities:
  vehicle:
    grain: one row per vehicle
    key: [vehicle_id]
    scd: type2
    fields:
      vehicle_id: {{type: string, required: true}}
      make: {{type: {make}, classification: pii}}
      seats: {{type: "{seats}"}}
"""
MAPPING = """\
mapping_version: 1
source: raw_vehicles
target: vehicle
key:
  vehicle_id: {from: "$.vid"}
fields:
  make: {from: "$.make"}
  seats: {from: "$.seats"}
"""
COLUMNS = ["vid", "make", "seats"]


def _spec(root: Path, seats: str, make: str = "string") -> Path:
    spec = root / "spec"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITY.format(seats=seats, make=make))
    (spec / "vehicles.yml").write_text(MAPPING)
    return spec


def _history(project) -> list[tuple]:
    return sorted(project.query("select vehicle_id, seats, dbt_valid_to is null from silver.vehicle"), key=str)


def test_a_type2_field_takes_its_new_type_in_the_history(tmp_path, engine):
    spec = _spec(tmp_path, "int")
    project = engine.dbt_project(tmp_path / "project", spec, f"t2_types_{engine.id}")
    project.load_bronze([Relation("raw_vehicles", COLUMNS, [["V1", "Saab", "40"]])])
    project.dbt("build", check=True)
    assert _history(project) == [("V1", 40, True)]

    _spec(tmp_path, "decimal(5,1)")
    assert not generate_dbt_project(spec, project.path).report.conflicts
    project.load_bronze([Relation("raw_vehicles", COLUMNS, [["V1", "Saab", "40.5"]])])
    project.dbt("build", check=True)
    # before decision 1139: [(V1, 40, closed), (V1, 41, current)] in a BIGINT column
    assert _history(project) == [("V1", Decimal("40.0"), False), ("V1", Decimal("40.5"), True)]
    # an unchanged value in the new type opens no version
    project.dbt("build", check=True)
    assert len(_history(project)) == 2

    # a stored value the new type cannot hold: the node stops, counted, the value (pii) never shown
    _spec(tmp_path, "decimal(5,1)", make="int")
    assert not generate_dbt_project(spec, project.path).report.conflicts
    project.load_bronze([Relation("raw_vehicles", COLUMNS, [["V1", "7", "40.5"]])])
    built = project.dbt("build")
    out = built.stdout + built.stderr
    assert built.returncode != 0
    assert "HISTORY_TYPE_CHANGED:" in out and "but 2 of its versions hold a value" in out, out[-3000:]
    assert "Saab" not in out
    assert _history(project) == [("V1", Decimal("40.0"), False), ("V1", Decimal("40.5"), True)]
