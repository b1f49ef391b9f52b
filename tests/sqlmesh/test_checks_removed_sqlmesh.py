"""`assay checks` on SQLMesh after the spec stopped declaring a table's checks (an outside tester,
session 41): a plan recorded an advisory check's failure; the check was removed, the project
generated again, planned and run. `assay checks` kept printing the removed check's failure as "(the
latest)" and exited 2 every day, where dbt says its last build recorded none (exit 1). Real plans
and a real run on DuckDB."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.api_sqlmesh import generate_sqlmesh_project
from assay.cli.main import cli
from tests.sqlmesh.test_table_states_sqlmesh import MAPPING, meters

pytestmark = pytest.mark.slow

ENTITY = """\
spec_version: 1
entities:
  meter:
    grain: one row per meter
    key: [meter_id]
    fields:
      meter_id: {type: string, required: true}
      site: {type: string}
"""
CHECK = "    checks:\n      - {check_id: few_meters, kind: row_expectation, enforcement: advisory, max_rows: 1}\n"


def _spec(spec: Path, checks: str) -> Path:
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(ENTITY + checks)
    (spec / "meters.yml").write_text(MAPPING)
    return spec


def _checks(project, spec: Path):
    project.close()  # DuckDB: one writer per file
    return CliRunner().invoke(cli, ["checks", "--project", str(project.path), "--spec", str(spec)])


def test_a_removed_checks_old_result_is_not_the_latest(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = _spec(tmp_path / "spec", CHECK)
    sm = make_project(tmp_path / "sqlmesh", spec)
    try:
        sm.load_bronze([meters("M1", "M2", "M3")])
        sm.plan()
        first = _checks(sm, spec)
        assert first.exit_code == 2 and "FEW_METERS: warned" in first.output, first.output
        run = first.stderr.split()[1:3]

        _spec(spec, "")
        assert not generate_sqlmesh_project(spec, sm.path, dialect=sm.dialect).report.conflicts
        sm.close()
        sm.plan()
        sm.run()
        later = _checks(sm, spec)
        said = " ".join(later.output.split())
        assert later.exit_code == 1, later.output
        assert "was built since by a run that recorded none: the spec declares no check" in said, said
        assert f"run {' '.join(run)}'s are those of an earlier spec" in said, said
        # the run itself is still shown when asked for
        assert _checks_of(sm, spec, run[-1][:8]).exit_code == 2
    finally:
        sm.close()


def _checks_of(project, spec: Path, run: str):
    project.close()
    return CliRunner().invoke(cli, ["checks", run, "--project", str(project.path), "--spec", str(spec)])
