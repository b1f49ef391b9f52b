"""A table whose checks the spec no longer declares is judged by its latest build, not by the
results of checks it had (an outside tester, session 40). A required check set `item` back; its
checks were then removed, the project generated again and built: the build published the new rows,
yet `assay table list` and `table get` said "set back by the latest build ... the previous version
is still published" (exit 2), and the report kept the removed check's failure as the table's
state ("attention"). A real `dbt build` on DuckDB, three times."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.dbtproject import make_project
from tests.support.items import ENTITY, MAPPING, bronze, fill

pytestmark = pytest.mark.slow

CHECKS = ('    checks:\n      - {check_id: qty_max, kind: value_range, enforcement: required, columns: [qty], '
          'min_value: "0", max_value: "10"}\n')


def _spec(root, checks: str):
    spec = root / "spec"
    spec.mkdir(exist_ok=True)
    (spec / "entities.yml").write_text(fill(ENTITY, thresholds="", expr_limit="", checks=checks, expr_fail="flag"))
    (spec / "items.yml").write_text(fill(MAPPING, range_limit=""))
    return spec


def test_a_set_back_table_rebuilt_without_its_checks_is_published(tmp_path):
    spec = _spec(tmp_path, CHECKS)
    project = make_project(tmp_path / "project", spec)
    cli_in = lambda *args: CliRunner().invoke(cli, [*args, "--project", str(project.path), "--spec", str(spec)])  # noqa: E731
    first = [("a", "1"), ("b", "2")]
    project.load_bronze([bronze(first)])
    project.dbt("build", check=True)
    project.load_bronze([bronze(first + [("c", "99")])])
    assert project.dbt("build").returncode != 0  # QTY_MAX: 99 is above 10, the entity is set back
    print(project.query("select run_id, cast(run_started_at as varchar) from gold.mart_data_quality where rule = '(entity)'"))
    print(project.query("select run_id, check_id, cast(recorded_at as varchar) from assay_meta.assay_check_results"))
    got = cli_in("table", "get", "item")
    assert got.exit_code == 2 and "set back by the latest build" in got.output, got.output
    assert [r[0] for r in project.query('select item_id from silver."item" order by 1')] == ["i1", "i2"]

    # the check is removed from the spec; the next build publishes the rows it refused
    _spec(tmp_path, "")
    assert not generate_dbt_project(spec, project.path).report.conflicts
    project.dbt("build", check=True)
    assert [r[0] for r in project.query('select item_id from silver."item" order by 1')] == ["i1", "i2", "i3"]

    listed = cli_in("table", "list")
    assert "item: published" in listed.output and "set back" not in listed.output, listed.output
    got = cli_in("table", "get", "item")
    assert got.exit_code == 0 and "set back" not in got.output.splitlines()[0], got.output
    report = cli_in("report", "--json")
    assert report.exit_code == 0, report.output
    line = next(l for l in json.loads(report.stdout)["health"]["lines"] if l["entity"] == "item")
    # the removed check's failure is an earlier build's: it neither sets the level nor is counted
    assert (line["state"], line["level"], line["checks"]) == ("published", "ok", 0), line
    assert not any("QTY_MAX" in r for r in line["reasons"]), line
    # `assay checks` names dbt's last build, and why it recorded nothing: the spec declares no check
    # now, not "only `fail` rules" (an outside tester, session 41)
    checks = cli_in("checks")
    said = " ".join(checks.output.split())
    assert checks.exit_code == 1 and "passed and recorded no check results: the spec declares no check" in said, said
