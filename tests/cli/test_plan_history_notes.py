"""`assay plan` says what a type-2 entity's kept history does with a column whose type changed or
that is no longer a field (decision 1139; an outside tester, session 41: SQLMesh's plan refused
the change with a step no document named)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_type2_type_change_dbt import ENTITY, MAPPING


def _spec(root: Path, seats: str, make: str = "string") -> Path:
    (root / "spec").mkdir(parents=True)
    (root / "spec" / "entities.yml").write_text(ENTITY.format(seats=seats, make=make))
    (root / "spec" / "vehicles.yml").write_text(MAPPING)
    return root


def _notes(tmp_path: Path, project_file: str, text: str) -> list[str]:
    old, new = _spec(tmp_path / "old", "int"), _spec(tmp_path / "new", "decimal(5,1)")
    project = tmp_path / project_file.split(".")[0]
    project.mkdir()
    (project / project_file).write_text(text)
    result = CliRunner().invoke(cli, ["plan", str(old), "--spec", str(new), "--project", str(project), "--json"])
    assert result.exit_code == 0, result.output
    said = CliRunner().invoke(cli, ["plan", str(old), "--spec", str(new), "--project", str(project)])
    assert all(f"note: {n}" in said.stderr for n in json.loads(result.stdout)["notes"])
    return json.loads(result.stdout)["notes"]


def test_sqlmesh_is_said_to_refuse_the_change_and_how_to_go_on(tmp_path):
    (note,) = _notes(tmp_path, "config.yaml", "model_defaults:\n  dialect: duckdb\n")
    assert "the next `sqlmesh plan` refuses to change or drop its column seats" in note
    assert "`sqlmesh plan --allow-destructive-model silver.vehicle` drops the stored values" in note


def test_dbt_is_said_to_alter_the_column(tmp_path):
    (note,) = _notes(tmp_path, "dbt_project.yml", "name: fleet\nprofile: fleet\n")
    assert "the next build alters its history's column seats to the new type" in note
