"""A failed build of a SQLMesh development environment is not prod's (decision 0936).

`@assay_record_environment` in the config's `before_all` records which environment each plan is
for; `assay table get|list` attribute each failed build to its environment. Real plans on DuckDB:

1. prod publishes 3 meters;
2. the spec raises `min_rows` and `sqlmesh plan dev` builds the new version in dev, whose check
   fails: prod still reads `published` (exit 0), its events name the dev run as dev's; dev reads
   the failure (its view shows the failing build: `published_failing`, exit 2); `assay checks`
   means prod's latest run (`--environment dev` dev's), the report's checks are prod's, and
   `check list` names each run's environment;
3. the same change planned for prod fails there: prod reads `set_back` naming prod's own run.

Before this decision step 2 read `set back` in prod, naming the dev plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.api_sqlmesh import generate_sqlmesh_project
from assay.cli.main import cli
from tests.sqlmesh.test_table_states_sqlmesh import OPEN, meters, sqlmesh_runs, write_spec
from tests.support.corpus import Relation
from tests.support.sqlmeshfailures import plan_fails

pytestmark = pytest.mark.slow


SITES = """\
spec_version: 1
entities:
  site:
    grain: one row per site
    key: [site_id]
    fields:
      site_id: {type: string, required: true}
    checks:
      - {check_id: some_sites, kind: row_expectation, enforcement: required, min_rows: 1}
"""
SITE_MAPPING = """\
mapping_version: 1
source: raw_sites
target: site
key:
  site_id: {from: "$.id"}
"""


def with_sites(spec: Path) -> Path:
    """The meter spec with a second entity, `site`, which no step changes."""
    (spec / "sites_entities.yml").write_text(SITES)
    (spec / "sites.yml").write_text(SITE_MAPPING)
    return spec


def table_get(project, spec: Path, *env: str) -> tuple[int, str, dict]:
    project.close()
    args = ["table", "get", "meter", "--project", str(project.path), "--spec", str(spec), *env]
    said = CliRunner().invoke(cli, args)
    got = CliRunner().invoke(cli, [*args, "--json"])
    assert "Traceback" not in said.output + got.output, said.output + got.output
    assert said.exit_code == got.exit_code, (said.output, got.output)
    return said.exit_code, said.stdout, json.loads(got.stdout)


def environments(project) -> dict[str, str]:
    return dict(project.query("select run_id, why from assay_meta.assay_events where event_type = 'RUN_ENVIRONMENT'"))


def test_a_failed_dev_build_is_not_read_as_prods(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = with_sites(write_spec(tmp_path / "spec", min_rows=2))
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    try:
        # 1. prod publishes
        sm.load_bronze([meters("M1", "M2", "M3"), Relation("raw_sites", ["id"], [["S1"], ["S2"]])])
        sm.plan()
        first = sqlmesh_runs(sm)[-1]
        assert environments(sm) == {first: "prod"}
        assert table_get(sm, spec)[:2] == (0, "meter: published\n")

        # 2. a failing change planned for dev only
        with_sites(write_spec(spec, min_rows=4))
        assert not generate_sqlmesh_project(spec, sm.path, dialect=sm.dialect).report.conflicts
        sm.close()
        try:
            sm.plan(environment="dev")
        except Exception:  # noqa: BLE001 - whether SQLMesh stops a dev plan on it is SQLMesh's call
            pass
        dev = sqlmesh_runs(sm)[-1]
        assert dev != first and environments(sm)[dev] == "dev"
        code, text, got = table_get(sm, spec)
        assert (code, got["state"], got["run"]) == (0, "published", None), text
        assert text.startswith("meter: published\n"), text
        dev_events = [e for e in got["events"] if e["run"] == dev]
        assert {e["event"] for e in dev_events} == {"TABLE_BUILD_FAILED", "CHECK_FAILED"}, got["events"]
        assert {e["environment"] for e in dev_events} == {"dev"}
        assert f"run {dev} (environment dev) check ENOUGH_METERS" in text, text
        listed = CliRunner().invoke(cli, ["table", "list", "--json", "--project", str(sm.path), "--spec", str(spec)])
        assert {t["table"]: t["state"] for t in json.loads(listed.stdout)} == {"meter": "published", "site": "published"}
        # dev has no view of the unchanged site: it reads prod's table, and says so
        listed = CliRunner().invoke(cli, ["table", "list", "--environment", "dev", "--project", str(sm.path), "--spec", str(spec)])
        assert "site: published (prod's table: unchanged in environment dev)" in listed.output.splitlines(), listed.output
        # `assay checks` means prod's latest run, the report's checks are prod's, and `check list`
        # names each run's environment
        args = ["--project", str(sm.path), "--spec", str(spec)]
        said = CliRunner().invoke(cli, ["checks", *args])
        assert said.exit_code == 0 and f"run {first} (the latest)" in said.output, said.output
        said = CliRunner().invoke(cli, ["checks", "--environment", "dev", *args])
        assert said.exit_code == 2 and f"run {dev} (the latest)" in said.output, said.output
        said = CliRunner().invoke(cli, ["checks", dev, *args])  # a run named: shown, with its environment
        assert said.exit_code == 2 and f"run {dev} (environment dev)" in said.output, said.output
        report = json.loads(CliRunner().invoke(cli, ["report", "--json", *args]).stdout)
        assert {c["run_id"] for c in report["checks"]} == {first}, report["checks"]
        listed_runs = json.loads(CliRunner().invoke(cli, ["check", "list", "--json", *args]).stdout)
        assert {(i["run"], i.get("environment")) for i in listed_runs} == {(first, "prod"), (dev, "dev")}
        listed_runs = json.loads(CliRunner().invoke(cli, ["check", "list", "--json", "--environment", "dev", *args]).stdout)
        assert {i["run"] for i in listed_runs} == {dev}
        said = CliRunner().invoke(cli, ["check", "rows", dev, "enough_meters", "--environment", "dev", *args])
        assert said.exit_code == 0 and "Traceback" not in said.output, said.output
        assert "(environment" not in said.output, said.output  # the run is the environment's read
        # a run of another environment than the one read says which (an outside tester, session 45)
        said = CliRunner().invoke(cli, ["check", "rows", dev, "enough_meters", *args])
        assert said.exit_code == 0 and f"run {dev} (environment dev)" in said.stderr, said.output
        # dev reads its own build: its view shows the failing rows or the previous version
        code, text, got = table_get(sm, spec, "--environment", "dev")
        assert code == 2, text
        assert (got["state"], got["run"], got["check"]) in {("published_failing", dev, "ENOUGH_METERS"),
                                                             ("set_back", dev, "ENOUGH_METERS")}, got

        # 3. the same change planned for prod fails there, and prod says so
        failures = plan_fails(sm)
        assert {getattr(f, "audit", None) for f in failures} == {"assay_check__enough_meters"}, failures
        prod = sqlmesh_runs(sm)[-1]
        assert environments(sm)[prod] == "prod"
        code, text, got = table_get(sm, spec)
        assert (code, got["state"], got["run"], got["check"]) == (2, "set_back", prod, "ENOUGH_METERS"), text
        # read from dev, prod's events are the other environment's and say so
        code, text, got = table_get(sm, spec, "--environment", "dev")
        prod_lines = [line for line in text.splitlines() if f"run {prod}" in line]
        assert prod_lines and all("(environment prod)" in line for line in prod_lines), text
    finally:
        sm.close()
