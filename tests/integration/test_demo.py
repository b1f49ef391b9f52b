"""The README's demo end to end: init, generate, load, dbt build, dbt source freshness, report."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from assay.cli.main import cli

pytestmark = pytest.mark.slow


def test_demo_runs_end_to_end(tmp_path):
    res = CliRunner().invoke(cli, ["demo", str(tmp_path / "demo")])
    assert res.exit_code == 0, res.output
    assert "4. dbt build: ok" in res.output
    assert "5. dbt source freshness: ok" in res.output
    assert "PASS freshness of bronze.raw_orders" in res.output
    lines = {l.split()[0]: l.split()[1:] for l in res.output.splitlines() if l.startswith(("customer ", "order "))}
    assert lines["customer"] == ["6", "3", "1", "2", "1"]
    assert lines["order"] == ["10", "5", "3", "4", "1"]
