"""`assay table get` on SQLMesh after a `fail` rule stopped the run (decision 0932).

The staged model's blocking audit of a `fail` rule stops the run before the entity is written.
Its recorder (a post-statement of the staged model, run before the audits) records one
CHECK_FAILED per fail rule that fired, naming the rule, and TABLE_BUILD_FAILED `not_written`, so
`assay table get` says set back (not published on a first build), naming the rule, exit 2, and
the entity keeps its previous rows. A fixing delivery publishes again.

Real plans and runs of SQLMesh on DuckDB.
"""

from __future__ import annotations

import pytest

from tests.sqlmesh.test_table_states_sqlmesh import ENTITIES as STATES_ENTITIES, OPEN, meters as _meters, published, table_get
from tests.support.corpus import Relation
from tests.support.sqlmeshfailures import plan_fails

pytestmark = pytest.mark.slow

ENTITIES = STATES_ENTITIES.format(min_rows=2)  # the set-back test's meter, at least two rows
MAPPING = """\
mapping_version: 1
source: raw_meters
target: meter
key:
  meter_id:
    from: "$.id"
    quality:
      - {rule: coercible, on_fail: flag}
unmapped: [$._source_row_id, $._load_id, $._ingested_at]
fields:
  site:
    from: "$.site"
    quality:
      - {rule: coercible, on_fail: flag}
      - {rule: not_null, on_fail: fail}
"""


LOADS = iter(range(1, 1000))


def meters(*ids: str, without_site: tuple[str, ...] = ()) -> Relation:
    """Each meter once, in a new load (the quality system reads the ingestion metadata)."""
    rel = _meters(*ids)
    load = next(LOADS)
    return Relation(rel.name, [*rel.columns, "_source_row_id", "_load_id", "_ingested_at"],
                    [[i, None if i in without_site else s, i, f"L{load}", f"2024-01-01 00:00:{load % 60:02d}"]
                     for i, s in rel.rows])


def write_spec(spec, checks: bool = True):
    """The meter spec; without `checks`, the meter's only check is the `fail` rule (decision 0957)."""
    spec.mkdir(parents=True, exist_ok=True)
    text = ENTITIES if checks else "".join(line for line in ENTITIES.splitlines(keepends=True)
                                           if "checks:" not in line and "check_id:" not in line)
    (spec / "entities.yml").write_text(text)
    (spec / "meters.yml").write_text(MAPPING)
    return spec


def rule_name(project) -> str:
    """The fail rule's name, as the generated staged model's audit names it."""
    import re

    staged = next(project.path.rglob("meter__staged.sql")).read_text()
    return re.search(r"assay_fail_rule\(rule_name := '([^']+)'", staged).group(1)


def test_a_fail_rule_that_stops_the_run_sets_the_table_back(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    rule = rule_name(sm)
    try:
        sm.load_bronze([meters("M1", "M2", "M3")])
        sm.plan()
        assert table_get(sm.path, spec)[:2] == (0, "meter: published")

        # a delivery whose row fails the rule: the staged model's audit stops the run
        sm.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
        assert not sm.run()
        assert published(sm) == ["M1", "M2", "M3"]  # the entity keeps its previous rows
        code, line, got = table_get(sm.path, spec)
        assert code == 2, line
        assert line.startswith("meter: set back by the latest build (run SQLMESH_RUN: "), line
        assert line.endswith(f"check {rule} did not pass; the previous version is still published"), line
        assert (got["state"], got["check"], got["why"]) == ("set_back", rule, "previous_version_kept"), got
        events = [(e["event"], e["check"], e["why"]) for e in got["events"][:2]]
        assert events == [("TABLE_BUILD_FAILED", rule, "not_written"),
                          ("CHECK_FAILED", rule, f"1 row failed rule {rule} (on_fail: fail)")], events
        assert {e["run"] for e in got["events"][:2]} == {got["run"]}
        # explain reads the stopped run's judgement, not as published: M1's newer delivery was kept
        # by it, the entity holds load 1's (an outside tester, session 49)
        from click.testing import CliRunner

        from assay.cli.main import cli

        said = CliRunner().invoke(cli, ["explain", "meter", "M1", "--project", str(sm.path), "--spec", str(spec)])
        import re

        told = re.search(r"The last build kept its delivery M1 \(load L(\d+)\), but the published table holds delivery M1 "
                         r"of load L(\d+) \(the last build was not published\)\.", said.output)
        assert told and int(told.group(1)) > int(told.group(2)), said.output  # LOADS numbers the loads

        # a fixing delivery publishes
        sm.load_bronze([meters("M1", "M2", "M3", "M4")])
        assert sm.run()
        assert published(sm) == ["M1", "M2", "M3", "M4"]
        assert table_get(sm.path, spec)[:2] == (0, "meter: published")
    finally:
        sm.close()


def test_a_fail_rule_that_stops_the_first_build_leaves_the_table_not_published(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    rule = rule_name(sm)
    try:
        sm.load_bronze([meters("M1", "M2", "M3", without_site=("M2", "M3"))])
        failures = plan_fails(sm)
        assert any(getattr(f, "audit", None) == "assay_fail_rule" for f in failures), failures
        code, line, got = table_get(sm.path, spec)
        assert code == 2, line
        assert line.startswith("meter: not published: run SQLMESH_PLAN: "), line
        assert line.endswith(f"check {rule} did not pass"), line
        assert got["events"][1]["why"] == f"2 rows failed rule {rule} (on_fail: fail)", got["events"]
    finally:
        sm.close()


def test_an_ingestion_metadata_stop_sets_the_table_back(tmp_path):
    """The staged model's ingestion-metadata audit stops the run: its recorder (decision 0935)
    records CHECK_FAILED INGESTION_METADATA and TABLE_BUILD_FAILED `not_written`, as dbt's hook
    does (tests/integration/test_stopped_builds_dbt.py)."""
    from tests.support.sqlmeshproject import make_project

    spec = write_spec(tmp_path / "spec")
    sm = make_project(tmp_path / "sqlmesh", spec)
    OPEN[sm.path] = sm
    try:
        sm.load_bronze([meters("M1", "M2", "M3")])
        sm.plan()
        assert table_get(sm.path, spec)[:2] == (0, "meter: published")

        # the last row of the delivery has no `_ingested_at`
        rel = meters("M1", "M2", "M3", "M4")
        rows = [list(r) for r in rel.rows]
        rows[-1][rel.columns.index("_ingested_at")] = None
        sm.load_bronze([Relation(rel.name, rel.columns, rows)])
        assert not sm.run()
        assert published(sm) == ["M1", "M2", "M3"]
        code, line, got = table_get(sm.path, spec)
        assert code == 2, line
        assert line.startswith("meter: set back by the latest build (run SQLMESH_RUN: "), line
        assert line.endswith("check INGESTION_METADATA did not pass; the previous version is still published"), line
        assert [(e["event"], e["check"], e["why"]) for e in got["events"][:2]] == [
            ("TABLE_BUILD_FAILED", "INGESTION_METADATA", "not_written"),
            ("CHECK_FAILED", "INGESTION_METADATA", "1 violating row")], got["events"]
    finally:
        sm.close()
