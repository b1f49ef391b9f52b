"""`dbt: {snapshot_clock: project}` in assay.yml (decision 0996): a dbt project that dates its
snapshots with its own `duckdb__snapshot_get_time` keeps it. assay's override (decision 0992)
defines the same macro, which dbt refuses to find twice; with the setting assay writes none.
Real `dbt deps` and `dbt parse` on the example `assay init` writes (a type-2 customer)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.dbtserver import in_project

pytestmark = pytest.mark.slow

OWN_CLOCK = "{% macro duckdb__snapshot_get_time() -%}\n  now()\n{%- endmacro %}\n"
CLOCK = "macros/assay/snapshot_clock.sql"


def test_a_project_with_its_own_snapshot_clock_parses_once_assay_leaves_the_clock_to_it(tmp_path):
    project = tmp_path / "shop"
    assert CliRunner().invoke(cli, ["init", str(project)]).exit_code == 0
    generated = CliRunner().invoke(cli, ["generate", "dbt", "--project", str(project)])
    assert generated.exit_code == 0, generated.output
    assert "assay.utc_now()" in (project / CLOCK).read_text()
    (project / "macros" / "my_clock.sql").write_text(OWN_CLOCK)
    in_project(project, "deps", check=True)
    refused = in_project(project, "parse")
    assert refused.returncode != 0
    assert 'dbt found multiple macros named "duckdb__snapshot_get_time"' in " ".join(refused.stdout.split())

    settings = project / "assay.yml"
    settings.write_text(settings.read_text() + "dbt:\n  snapshot_clock: project\n")
    again = CliRunner().invoke(cli, ["generate", "dbt", "--project", str(project)])
    assert again.exit_code == 0, again.output
    assert not (project / CLOCK).exists()  # removed: assay wrote it, assay owns it
    assert (project / "macros" / "my_clock.sql").read_text() == OWN_CLOCK
    in_project(project, "parse", check=True)
