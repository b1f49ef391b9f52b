"""`assay table get` on dbt after a blocking test stopped the entity before it was written
(decision 0935).

A `fail` rule's test on `<entity>__staged` and the ingestion-metadata test on its bronze relation
run before the entity: when one fails dbt skips the entity, so its materialization never runs.
The package's on-run-end hook records the stop as SQLMesh's recorders do (decision 0932): one
CHECK_FAILED per stopping test, named by the rule (or INGESTION_METADATA), and TABLE_BUILD_FAILED
`not_written`; so `table get` says set back (not published on a first build), naming the check,
exit 2, under the run id the build's other records carry. A fixing delivery publishes again.

Real `dbt build` on DuckDB, with the SQLMesh fail-rule test's spec (tests/sqlmesh/
test_table_states_fail_rule_sqlmesh.py), so that both targets are held to the same lines. The
first test also runs on PostgreSQL 18 (the `engine` fixture): the hook's insert and commit in
the warehouse's own SQL; the hook is the same Jinja on every adapter, so the other two, which
differ from it in the stopping test only, run on DuckDB. On Spark, test_spark_stopped_builds
reads the same stops' events from the table.
"""

from __future__ import annotations

import json

import pytest

from tests.sqlmesh.test_table_states_fail_rule_sqlmesh import meters, write_spec
from tests.sqlmesh.test_table_states_sqlmesh import table_get
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

RULE = "site_not_null"  # the spec's fail rule, as the generator names it


def published(project) -> list[str]:
    return [r[0] for r in project.query("select meter_id from silver.meter order by meter_id")]


def invocation(project) -> str:
    """The run id of the last dbt invocation (what every node of the build records)."""
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def events(project) -> list[tuple]:
    return project.query("select event_type, run_id, table_name, check_name, why, row_count "
                         "from assay_meta.assay_events order by event_type, check_name")


def broken_metadata(*ids: str) -> Relation:
    """A delivery whose last row has no `_ingested_at`: the ingestion-metadata test fails."""
    rel = meters(*ids)
    rows = [list(r) for r in rel.rows]
    rows[-1][rel.columns.index("_ingested_at")] = None
    return Relation(rel.name, rel.columns, rows)


def test_a_fail_rule_stop_sets_the_table_back_and_a_fix_publishes(tmp_path, engine):
    """The meter has no declared check here, only the `fail` rule (the SQLMesh test's meter has
    one): it is a table with checks all the same, and the fixing build, which records no check
    result, ends the state through the quality history (probe 33, decision 0957)."""
    spec = write_spec(tmp_path / "spec", checks=False)
    project = engine.dbt_project(tmp_path / "dbt", spec, "stopped_builds")
    project.load_bronze([meters("M1", "M2", "M3")])
    project.dbt("build", check=True)
    assert table_get(project.path, spec)[:2] == (0, "meter: published")
    # a build that stopped nothing records no event (without a declared check, not even the table)
    assert not project.query("select table_name from information_schema.tables where table_schema = 'assay_meta' "
                             "and table_name = 'assay_events'")

    # a delivery whose row fails the rule: the staged model's test stops the run
    project.load_bronze([meters("M1", "M2", "M3", "M4", without_site=("M4",))])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    assert published(project) == ["M1", "M2", "M3"]  # the entity keeps its previous rows
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == (f"meter: set back by the latest build (run {run}): check {RULE} did not pass; "
                    "the previous version is still published"), line
    assert (got["state"], got["check"], got["why"], got["run"]) == ("set_back", RULE, "previous_version_kept", run), got
    assert [(e["event"], e["check"], e["why"]) for e in got["events"][:2]] == [
        ("TABLE_BUILD_FAILED", RULE, "not_written"),
        ("CHECK_FAILED", RULE, f"1 row failed rule {RULE} (on_fail: fail)")], got["events"]
    assert events(project) == [("CHECK_FAILED", run, "meter", RULE, f"1 row failed rule {RULE} (on_fail: fail)", 1),
                               ("TABLE_BUILD_FAILED", run, "meter", RULE, "not_written", None)]

    # a fixing delivery publishes: its row in the quality history, recorded later, ends the state
    project.load_bronze([meters("M1", "M2", "M3", "M4")])
    project.dbt("build", check=True)
    assert published(project) == ["M1", "M2", "M3", "M4"]
    assert table_get(project.path, spec)[:2] == (0, "meter: published")
    # the report reads the same: the fixing build recorded no check result, and the stop is not
    # its latest build's any more (decision 0957)
    page = report(project, spec)
    assert [c["check_id"] for c in page["checks"] if c["table"] == "meter"] == []
    line = next(x for x in page["health"]["lines"] if x.get("entity") == "meter")
    assert line["headline"] == "meter: published" and not any(RULE in r for r in line["reasons"]), line


def report(project, spec) -> dict:
    """`assay report --json` of the project."""
    from click.testing import CliRunner

    from assay.cli.main import cli

    res = CliRunner().invoke(cli, ["report", "--json", "--project", str(project.path), "--spec", str(spec)])
    assert res.exit_code == 0 and "Traceback" not in res.output, res.output
    return json.loads(res.stdout)


def test_a_fail_rule_stop_of_the_first_build_leaves_the_table_not_published(tmp_path):
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([meters("M1", "M2", "M3", without_site=("M2", "M3"))])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == f"meter: not published: run {run} set it back, check {RULE} did not pass", line
    assert got["events"][1]["why"] == f"2 rows failed rule {RULE} (on_fail: fail)", got["events"]


def test_an_ingestion_metadata_stop_sets_the_table_back(tmp_path):
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    # first build: the metadata test stops it, the table is not published
    project.load_bronze([broken_metadata("M1", "M2", "M3")])
    assert project.dbt("build").returncode != 0
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == f"meter: not published: run {invocation(project)} set it back, check INGESTION_METADATA did not pass"
    assert [(e["event"], e["check"], e["why"]) for e in got["events"][:2]] == [
        ("TABLE_BUILD_FAILED", "INGESTION_METADATA", "not_written"),
        ("CHECK_FAILED", "INGESTION_METADATA", "1 violating row")], got["events"]

    project.load_bronze([meters("M1", "M2", "M3")])
    project.dbt("build", check=True)
    assert table_get(project.path, spec)[:2] == (0, "meter: published")

    # a later build stopped by the metadata test (and by the rule): set back, naming the
    # metadata test, which runs first; the rule's own test is skipped behind it
    project.load_bronze([broken_metadata("M1", "M2", "M3", "M4")])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    assert published(project) == ["M1", "M2", "M3"]
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == (f"meter: set back by the latest build (run {run}): check INGESTION_METADATA did not pass; "
                    "the previous version is still published"), line


# --------------------------------------------------------------------------- an upstream entity set back (decision 0940)
# `item` reads `shop` through a referential rule: a build that sets `shop` back (its required
# check fails) makes dbt skip every node of `item`. The hook records that `item` was not written,
# naming `shop`; `table get item` says so, with the check that set `shop` back, exit 2.
def test_an_entity_whose_own_model_errored_is_set_back_naming_it(tmp_path):
    """A database error in the entity's staged model (bronze lost a column the mapping reads) makes
    dbt skip the entity: `table get` said the previous build's state, naming that build's run and
    cause, as the latest (an outside tester, session 37). The hook records the skip, naming the
    model that errored; the table is set back by this run."""
    spec = write_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze([meters("M1", "M2")])
    project.dbt("build", check=True)
    good = meters("M1", "M2", "M3")
    site = good.columns.index("site")
    project.load_bronze([Relation(good.name, good.columns[:site] + good.columns[site + 1:],
                                  [r[:site] + r[site + 1:] for r in good.rows])])
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    assert published(project) == ["M1", "M2"]
    code, line, got = table_get(project.path, spec)
    assert code == 2, line
    assert line == (f"meter: set back by the latest build (run {run}): it was not written: its model meter__staged "
                    "errored (dbt's log says why); the previous version is still published"), line
    assert (got["events"][0]["event"], got["events"][0]["why"]) == ("TABLE_BUILD_FAILED", "node_errored: meter__staged")
    # `assay checks RUN` does not pass the run (an outside tester, session 48, on SQLMesh)
    from click.testing import CliRunner

    from assay.cli.main import cli

    checks = CliRunner().invoke(cli, ["checks", run, "--project", str(project.path), "--spec", str(spec)])
    assert checks.exit_code == 2, checks.output
    assert checks.stdout.splitlines()[0] == ("meter: MODEL_ERRORED: ERRORED: its model meter__staged errored "
                                             "(dbt's log says why)"), checks.stdout


UPSTREAM_ENTITIES = """\
spec_version: 1
entities:
  shop:
    grain: one row per shop
    key: [shop_id]
    fields:
      shop_id: {type: string, required: true}
      city: {type: string}
    checks:
      - {check_id: enough_shops, kind: row_expectation, enforcement: required, min_rows: 2}
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      shop_id: {type: string}
      name: {type: string}
    quarantine: {retention: 30d}
    quality:
      - {rule: referential, via: item_of_shop, on_missing: quarantine}
    checks:
      - {check_id: some_items, kind: row_expectation, enforcement: required, min_rows: 1}
relationships:
  - {name: item_of_shop, from: item, to: shop, via: {shop_id: shop_id}, cardinality: many_to_one}
"""
SHOP_CHECK = "ENOUGH_SHOPS"  # the required check, as the build names it
UPSTREAM = "upstream_failed: shop"  # the why the hook records for `item`


def write_upstream_spec(spec):
    from tests.integration.test_keep_dbt import ITEMS_MAPPING, SHOPS_MAPPING

    spec.mkdir(parents=True, exist_ok=True)
    (spec / "entities.yml").write_text(UPSTREAM_ENTITIES)
    (spec / "shops.yml").write_text(SHOPS_MAPPING)
    (spec / "items.yml").write_text(ITEMS_MAPPING)
    return spec


def shops_and_items(*shop_ids: str) -> list[Relation]:
    """One delivery: the given shops, and one item of the first shop."""
    from tests.integration.test_keep_dbt import items, shops

    return [shops(*[["l1", "2026-02-01T08:00:00Z", f"s{n}", s, "Oslo"] for n, s in enumerate(shop_ids)]),
            items(["l1", "2026-02-01T08:00:00Z", "a1", "i1", shop_ids[0], "apple"])]


def table_get_of(project, spec, table: str) -> tuple[int, str, dict]:
    """`assay table get TABLE` (exit code, first line) and its `--json`."""
    from click.testing import CliRunner

    from assay.cli.main import cli

    args = ["table", "get", table, "--project", str(project.path), "--spec", str(spec)]
    said, got = CliRunner().invoke(cli, args), CliRunner().invoke(cli, [*args, "--json"])
    assert "Traceback" not in said.output + got.output, said.output + got.output
    assert said.exit_code == got.exit_code and got.stdout.strip(), (said.output, got.output)
    return said.exit_code, said.stdout.splitlines()[0], json.loads(got.stdout)


def upstream_events(project, run: str) -> list[tuple]:
    return project.query("select event_type, table_name, check_name, why from assay_meta.assay_events "
                         f"where run_id = '{run}' and event_type <> 'CHECK_PASSED' order by table_name, event_type")


@pytest.mark.duckdb_only("the set-back and the skip are the same Jinja on every adapter; on PostgreSQL 18 the first test of this module runs the hook's insert and commit, test_declared_checks_dbt and test_anomaly_shift_dbt set an entity back")
def test_an_entity_skipped_because_its_upstream_was_set_back_says_so(tmp_path, engine):
    spec = write_upstream_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "dbt", spec, "upstream_set_back")
    project.load_bronze(shops_and_items("S1", "S2"))
    project.dbt("build", check=True)
    # a build that skipped nothing records no event
    assert upstream_events(project, invocation(project)) == []
    assert table_get_of(project, spec, "item")[:2] == (0, "item: published")

    # one shop only: `shop`'s required check fails, it is set back, dbt skips `item`
    project.load_bronze(shops_and_items("S1"))
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    nodes = {r["unique_id"]: r["status"] for r in
             json.loads((project.path / "target" / "run_results.json").read_text())["results"]}
    assert nodes["model.assay_it.item"] == "skipped", nodes
    recorded = upstream_events(project, run)
    assert recorded[0] == ("TABLE_BUILD_FAILED", "item", None, UPSTREAM), recorded  # names and counts only
    assert [e[:3] for e in recorded] == [("TABLE_BUILD_FAILED", "item", None), ("CHECK_FAILED", "shop", SHOP_CHECK),
                                         ("TABLE_ROLLED_BACK", "shop", SHOP_CHECK)], recorded
    code, line, got = table_get_of(project, spec, "item")
    assert code == 2, line
    assert line == (f"item: set back by the latest build (run {run}): it was not written because its upstream "
                    f"entity shop did not pass check {SHOP_CHECK}; the previous version is still published"), line
    assert {k: got[k] for k in ("state", "run", "check", "why", "upstream")} == {
        "state": "set_back", "run": run, "check": SHOP_CHECK, "why": "upstream_failed", "upstream": "shop"}, got
    assert (got["events"][0]["event"], got["events"][0]["why"]) == ("TABLE_BUILD_FAILED", UPSTREAM), got["events"]
    assert table_get_of(project, spec, "shop")[:2] == (2, f"shop: set back by the latest build (run {run}): check "
                                                         f"{SHOP_CHECK} did not pass; the previous version is still published")

    # a fixing delivery publishes both: the child's check results, recorded later, end the state
    project.load_bronze(shops_and_items("S1", "S2", "S3"))
    project.dbt("build", check=True)
    assert upstream_events(project, invocation(project)) == []
    assert table_get_of(project, spec, "item")[:2] == (0, "item: published")


def test_an_upstream_set_back_on_the_first_build_leaves_the_child_not_published(tmp_path):
    spec = write_upstream_spec(tmp_path / "spec")
    project = make_project(tmp_path / "dbt", spec)
    project.load_bronze(shops_and_items("S1"))
    assert project.dbt("build").returncode != 0
    run = invocation(project)
    code, line, got = table_get_of(project, spec, "item")
    assert code == 2, line
    assert line == (f"item: not published: run {run} did not write it because its upstream entity shop "
                    f"did not pass check {SHOP_CHECK}"), line
    assert (got["state"], got["why"], got["upstream"], got["check"]) == ("not_published", "upstream_failed", "shop", SHOP_CHECK)
    # a selection without the parent skips nothing because of it: nothing more is recorded
    project.dbt("build", "--select", "item")
    assert [e for e in upstream_events(project, invocation(project)) if e[0] == "TABLE_BUILD_FAILED"] == []
