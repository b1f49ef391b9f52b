"""`assay table list|get` (decision 0514): the state of every table with checks, read from a real
DuckDB warehouse, and the exit codes: list 0; get 0 published, 2 kept or not published, 3 an
unknown table, 1 without a spec."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.scaffold import duckdb_profile, write_dbt_skeleton

ENTITIES = """\
spec_version: 1
entities:
  shop:
    grain: one row per shop
    key: [shop_id]
    fields:
      shop_id: {type: string, required: true}
      city: {type: string}
  plain:
    grain: one row per plain thing
    key: [plain_id]
    fields:
      plain_id: {type: string, required: true}
"""
MAPPING = """\
mapping_version: 1
source: raw_{name}
target: {name}
key:
  {name}_id: {{from: "$.id"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
KEEP = """/* assay
on_failure: keep
*/
select * from silver.shop where city = 'Nowhere'
"""
EVENTS = ("create table assay_meta.assay_events (event_id varchar, event_type varchar, run_id varchar, table_name varchar, "
          "check_name varchar, why varchar, row_count bigint, cutoff timestamp, occurred_at timestamp)")


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


@pytest.fixture
def setup(tmp_path):
    spec = tmp_path / "spec"
    (spec / "checks" / "silver" / "shop").mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "shops.yml").write_text(MAPPING.format(name="shop"))
    (spec / "plains.yml").write_text(MAPPING.format(name="plain"))
    (spec / "checks" / "silver" / "shop" / "no_nowhere.sql").write_text(KEEP)
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema silver")
    con.execute("create table silver.shop (shop_id varchar)")
    con.execute("create schema assay_meta")
    con.execute(EVENTS)
    con.close()
    return project, spec


def event(project: Path, kind: str, run: str, check: str, why: str, at: str) -> None:
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values (?, ?, ?, 'shop', ?, ?, null, null, ?)",
                [f"e-{run}-{kind}", kind, run, check, why, at])
    con.close()


def shop_line(listed: str) -> str:
    """The line of `shop` in `assay table list`'s text (an entity a failed build names is listed too,
    decision 0957)."""
    return next(line for line in listed.splitlines() if line.startswith("shop: "))


def table(project, spec, *args):
    return invoke("table", *args, "--project", str(project), "--spec", str(spec))


def test_list_and_get_follow_the_events(setup):
    project, spec = setup
    # only the table with checks is listed; published: it exists and carries no mark
    res = table(project, spec, "list", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == [{"table": "shop", "state": "published", "run": None, "check": None, "why": None, "since": None,
                                         "built_by_project": True}]
    assert table(project, spec, "get", "shop").exit_code == 0

    event(project, "TABLE_KEPT", "run-1", "silver.shop/no_nowhere", "keep_check_failed", "2026-12-01 10:00:00")
    res = table(project, spec, "get", "silver.shop", "--json")
    assert res.exit_code == 2, res.output
    got = json.loads(res.stdout)
    assert (got["state"], got["run"], got["check"]) == ("kept", "run-1", "silver.shop/no_nowhere")
    res = table(project, spec, "get", "shop")
    # the state first, then the table's events, newest first (issue 19: what happened, run by run)
    assert res.stdout == ("shop: kept since run run-1: check silver.shop/no_nowhere failed\n"
                          "events, newest first:\n"
                          "  2026-12-01T10:00:00Z  TABLE_KEPT  run run-1 check silver.shop/no_nowhere: keep_check_failed\n")
    assert res.exit_code == 2
    assert table(project, spec, "list").exit_code == 0  # listing is no verdict
    assert "events" not in json.loads(table(project, spec, "list", "--json").stdout)[0]  # one table's history is `get`'s

    # a newer clear wins; another table's event is not this table's
    event(project, "TABLE_KEPT_CLEARED", "run-2", "silver.shop/no_nowhere", "checks_passed", "2026-12-01 11:00:00")
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values ('e-x', 'CHECK_FAILED', 'run-9', 'plain', 'x', 'failed', 3, null, "
                "'2026-12-01 12:00:00')")
    con.close()
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert got["state"] == "published"
    assert got["events"] == [
        {"event": "TABLE_KEPT_CLEARED", "run": "run-2", "check": "silver.shop/no_nowhere", "why": "checks_passed",
         "at": "2026-12-01T11:00:00Z"},
        {"event": "TABLE_KEPT", "run": "run-1", "check": "silver.shop/no_nowhere", "why": "keep_check_failed",
         "at": "2026-12-01T10:00:00Z"}]


def test_a_kept_table_whose_latest_build_was_set_back_says_both(setup):
    """002: a set-back of data the mark does not name leaves the mark; the one-line state said only
    `kept since`, hiding that the latest build did not publish (an outside tester, session 48)."""
    project, spec = setup
    event(project, "TABLE_KEPT", "run-1", "silver.shop/no_nowhere", "keep_check_failed", "2026-12-01 10:00:00")
    event(project, "TABLE_ROLLED_BACK", "run-2", "SHOP_RANGE", "previous_version_kept", "2026-12-01 11:00:00")
    res = table(project, spec, "get", "shop")
    assert res.exit_code == 2
    assert res.stdout.splitlines()[0] == ("shop: kept since run run-1: check silver.shop/no_nowhere failed; the latest "
                                          "build (run run-2) was set back: check SHOP_RANGE did not pass"), res.stdout
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert (got["state"], got["run"], got["latest_set_back"]) == (
        "kept", "run-1", {"run": "run-2", "check": "SHOP_RANGE", "since": "2026-12-01T11:00:00Z"}), got
    # a set-back before the mark is the mark's past: not said
    event(project, "TABLE_KEPT", "run-3", "silver.shop/no_nowhere", "keep_check_failed", "2026-12-01 12:00:00")
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert (got["run"], "latest_set_back" in got) == ("run-3", False), got


def test_a_table_that_is_not_there_is_not_published_with_the_set_back_that_said_so(setup):
    project, spec = setup
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("drop table silver.shop")
    con.close()
    res = table(project, spec, "get", "shop", "--json")
    assert res.exit_code == 2
    assert json.loads(res.stdout)["why"] == "never built"
    event(project, "TABLE_ROLLED_BACK", "run-3", "silver.shop/no_nowhere", "not_published", "2026-12-01 12:00:00")
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert (got["state"], got["run"], got["check"], got["why"]) == ("not_published", "run-3", "silver.shop/no_nowhere", "not_published")


def test_an_unknown_table_is_a_usage_error_and_no_spec_is_a_problem(setup, tmp_path):
    project, spec = setup
    res = table(project, spec, "get", "nope")
    assert res.exit_code == 3
    assert "'nope' is no table with checks in this spec (those with checks: shop)" in res.output
    # an entity the spec declares, without checks: no usage error (an outside tester, session 45)
    for name in ("plain", "silver.plain"):
        res = table(project, spec, "get", name)
        assert res.exit_code == 1, res.output
        assert f"'{name}' is an entity of this spec without checks" in res.output, res.output
    res = invoke("table", "list", "--project", str(project))
    assert res.exit_code == 1
    assert "has no spec recorded by `assay generate`" in res.output


TABLES = """\
tables_version: 1
tables:
  bronze.raw_shop:
    grain: [id]
    columns: [id, city]
    checks:
      - {check_id: ids_present, kind: null_ceiling, enforcement: required, columns: [id], max_null_ppm: 0}
"""


def test_a_table_assay_only_reads_is_listed_by_its_schema_and_name(setup):
    project, spec = setup
    (spec / "tables.yml").write_text(TABLES)
    res = table(project, spec, "list", "--json")
    assert res.exit_code == 0, res.output
    assert [(t["table"], t["state"], t["built_by_project"]) for t in json.loads(res.stdout)] == [
        ("bronze.raw_shop", "not_published", False), ("shop", "published", True)]
    res = table(project, spec, "get", "bronze.raw_shop")
    # 002: a table the project only reads is never set back or kept by it
    assert (res.exit_code, res.stdout) == (2, "bronze.raw_shop: not published (not built by this project; the table does not exist)\n")
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema bronze")
    con.execute("create table bronze.raw_shop (id varchar, city varchar)")
    con.close()
    res = table(project, spec, "get", "bronze.raw_shop")
    assert (res.exit_code, res.stdout) == (0, "bronze.raw_shop: published (not built by this project)\n")


RESULTS = ("create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
           "check_position int, kind varchar, enforcement varchar, passed boolean, row_count int, check_spec varchar, "
           "measures varchar, recorded_at timestamp)")
PLAN1, PLAN2 = "SQLMESH_PLAN: 1111aaaa", "SQLMESH_PLAN: 2222bbbb"


def failed_plan(project: Path, *, environment: str = "prod", plans: tuple = (PLAN1,)) -> None:
    """SQLMesh's record of a plan (decision 0936) that built shop with its check passing, then failed
    on the entity `plain` (a blocking check): SQLMesh promoted no view, so silver.shop is absent."""
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("drop table silver.shop")
    con.execute(RESULTS)
    spec = json.dumps({"columns": [], "types": [], "bounds": {"on_failure": "keep"}})
    for n, plan in enumerate(plans):
        con.execute("insert into assay_meta.assay_events values (?, 'RUN_ENVIRONMENT', ?, null, null, ?, null, null, ?)",
                    [f"env-{n}", plan, environment, f"2026-12-0{n + 1} 10:00:00"])
    con.execute("insert into assay_meta.assay_check_results values (?, 'shop', 'silver.shop/no_nowhere', 1001, 'sql', "
                "'keep', true, 3, ?, '{\"rows\": 3, \"failing_rows\": 0}', '2026-12-01 10:00:01')", [PLAN1, spec])
    for kind, why in (("CHECK_FAILED", "row count 1 is below the declared minimum of 2"),
                      ("TABLE_BUILD_FAILED", "wrote sqlmesh__silver.silver__plain__123")):
        con.execute("insert into assay_meta.assay_events values (?, ?, ?, 'plain', 'ENOUGH_PLAIN', ?, null, null, "
                    "'2026-12-01 10:00:02')", [f"e-{kind}", kind, PLAN1, why])
    con.close()


def test_a_table_built_by_a_plan_that_failed_on_another_entity_is_not_published_for_that_reason(setup):
    """Decision 1122 (an outside tester's SQLMesh lake): the first prod plan failed only on one entity;
    the others were built with passing checks, but SQLMesh promotes no view of a failed plan. They
    are not published because of that failure, not `never built`."""
    project, spec = setup
    failed_plan(project)
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert {k: got[k] for k in ("state", "run", "check", "why", "failed_table", "built_in")} == {
        "state": "not_published", "run": PLAN1, "check": "ENOUGH_PLAIN", "why": "plan_failed", "failed_table": "plain",
        "built_in": PLAN1}
    said = table(project, spec, "get", "shop")
    assert said.exit_code == 2
    assert said.stdout.splitlines()[0] == (
        f"shop: not published: the plan that built it (run {PLAN1}) failed on plain (check ENOUGH_PLAIN did not pass), "
        "and SQLMesh publishes no view of a failed plan")
    assert "never built" not in table(project, spec, "list").stdout


def test_a_later_plan_that_failed_again_is_named_and_the_build_before_it(setup):
    project, spec = setup
    failed_plan(project, plans=(PLAN1, PLAN2))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values ('e-2', 'TABLE_BUILD_FAILED', ?, 'plain', 'ENOUGH_PLAIN', "
                "'wrote sqlmesh__silver.silver__plain__123', null, null, '2026-12-02 10:00:02')", [PLAN2])
    con.close()
    line = shop_line(table(project, spec, "list").stdout)
    assert line == (f"shop: not published: plan {PLAN2} failed on plain (check ENOUGH_PLAIN did not pass), and SQLMesh "
                    f"publishes no view of a failed plan; it was last built by run {PLAN1}"), line


def test_a_failed_plan_is_no_reason_after_a_later_plan_or_in_another_environment(setup):
    project, spec = setup
    failed_plan(project, plans=(PLAN1, PLAN2))  # PLAN2 started after the failure and recorded no failure
    assert shop_line(table(project, spec, "list").stdout) == "shop: not published (never built)"
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("update assay_meta.assay_events set why = 'dev' where event_type = 'RUN_ENVIRONMENT'")
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == "shop: not published (never built)"


DBT_RUN = "0f1e2d3c-0000-4000-8000-000000000001"  # a dbt invocation id


def other_event(project: Path, kind: str, table: str, check, why: str, at: str, run: str = DBT_RUN) -> None:
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values (?, ?, ?, ?, ?, ?, null, null, ?)",
                [f"e-{table}-{kind}-{at}", kind, run, table, check, why, at])
    con.close()


def test_a_table_dbt_skipped_for_its_upstream_names_it_and_what_failed_there(setup):
    """Decision 0940: dbt skipped `shop` because an entity it reads was not written in the same run;
    the state names that entity and the check that failed there, following a chain of skips."""
    project, spec = setup
    other_event(project, "TABLE_KEPT", "plain", "silver.plain/no_x", "keep_check_failed", "2026-12-01 10:00:00")
    other_event(project, "TABLE_BUILD_FAILED", "shop", None, "upstream_failed: plain", "2026-12-01 10:00:05")
    res = table(project, spec, "get", "shop", "--json")
    assert res.exit_code == 2, res.output
    got = json.loads(res.stdout)
    assert {k: got[k] for k in ("state", "run", "check", "why", "upstream", "check_table")} == {
        "state": "set_back", "run": DBT_RUN, "check": "silver.plain/no_x", "why": "upstream_failed",
        "upstream": "plain", "check_table": "plain"}
    assert got["kept"] is True  # plain was published and kept (an outside tester, session 49, read a failure)
    assert table(project, spec, "get", "shop").stdout.splitlines()[:3] == [
        f"shop: set back by the latest build (run {DBT_RUN}): it was not written because its upstream entity plain "
        "was published but kept: its check silver.plain/no_x failed, and a kept table's readers wait until its checks "
        "pass; the previous version is still published",
        "events, newest first:",
        f"  2026-12-01T10:00:05Z  TABLE_BUILD_FAILED  run {DBT_RUN}: upstream_failed: plain"]

    # the upstream was skipped in turn, for an entity that was set back (its failure is named), or
    # recorded nothing (its node errored: dbt's log says why)
    run2 = "0f1e2d3c-0000-4000-8000-000000000002"
    other_event(project, "TABLE_ROLLED_BACK", "region", "ENOUGH_REGIONS", "previous_version_kept", "2026-12-02 10:00:00", run2)
    other_event(project, "TABLE_BUILD_FAILED", "plain", None, "upstream_failed: region and 1 more", "2026-12-02 10:00:05", run2)
    other_event(project, "TABLE_BUILD_FAILED", "shop", None, "upstream_failed: plain", "2026-12-02 10:00:05", run2)
    assert table(project, spec, "get", "shop").stdout.splitlines()[0] == (
        f"shop: set back by the latest build (run {run2}): it was not written because its upstream entity plain was "
        "not written (region did not pass check ENOUGH_REGIONS); the previous version is still published")
    run3 = "0f1e2d3c-0000-4000-8000-000000000003"
    other_event(project, "TABLE_BUILD_FAILED", "shop", None, "upstream_failed: plain", "2026-12-03 10:00:05", run3)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("drop table silver.shop")
    con.close()
    got = json.loads(table(project, spec, "get", "shop", "--json").stdout)
    assert (got["state"], got["check"], got["upstream"]) == ("not_published", None, "plain")
    assert table(project, spec, "get", "shop").stdout.splitlines()[0] == (
        f"shop: not published: run {run3} did not write it because its upstream entity plain failed in that run "
        "(dbt's log says why)")


def test_a_dbt_build_stopped_on_another_entity_is_no_failed_plan(setup):
    """On dbt, a TABLE_BUILD_FAILED of another table (a stop, decision 0935) says nothing of a table
    absent without a failure of its own: dbt publishes each model alone (decision 1122 is SQLMesh's)."""
    project, spec = setup
    failed_plan(project)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("delete from assay_meta.assay_events where event_type = 'RUN_ENVIRONMENT'")
    con.execute(f"update assay_meta.assay_events set run_id = '{DBT_RUN}', why = 'not_written'")
    con.execute(f"update assay_meta.assay_check_results set run_id = '{DBT_RUN}'")
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == "shop: not published (never built)"


def _plain_event(project: Path, kind: str, run: str, check: str, why: str, at: str) -> None:
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values (?, ?, ?, 'plain', ?, ?, null, null, ?)",
                [f"e-{run}-{kind}-{check}", kind, run, check, why, at])
    con.close()


def _mart_run(project: Path, run: str, started: str) -> None:
    """The `(entity)` row of `plain` in the quality history for `run`, stamped `started`."""
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema if not exists gold")
    con.execute("create table if not exists gold.mart_data_quality (entity varchar, rule varchar, run_id varchar, "
                "run_started_at timestamp)")
    con.execute("insert into gold.mart_data_quality values ('plain', '(entity)', ?, ?)", [run, started])
    con.close()


def test_an_entity_without_checks_that_a_fail_rule_stopped_is_set_back_until_a_later_build(setup):
    """Probe 33 (a hospital spec): `admission` has no declared check or check file, only a `fail`
    rule; the rule stopped its build (CHECK_FAILED, TABLE_BUILD_FAILED `not_written`) and `assay
    checks` and the report said so, but `assay table get admission` answered `'admission' is no
    table with checks` (exit 3) and `table list` left it out (decision 0957). A later build in
    the quality history publishes it again; that build is timed by its recorded start, not by
    SQLMesh's mart stamp (the execution time, which may be after the failure it preceded)."""
    project, spec = setup
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create table silver.plain (plain_id varchar)")
    con.close()
    assert [t["table"] for t in json.loads(table(project, spec, "list", "--json").stdout)] == ["shop"]
    _mart_run(project, "run-4", "2026-12-01 11:00:00")
    _plain_event(project, "CHECK_FAILED", "run-5", "plain_id_range_min", "1 row failed rule plain_id_range_min (on_fail: fail)",
                 "2026-12-01 12:00:00")
    _plain_event(project, "TABLE_BUILD_FAILED", "run-5", "plain_id_range_min", "not_written", "2026-12-01 12:00:00")
    res = table(project, spec, "list")
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == ("plain: set back by the latest build (run run-5): check plain_id_range_min did not "
                                          "pass; the previous version is still published")
    res = table(project, spec, "get", "plain", "--json")
    assert res.exit_code == 2, res.output
    got = json.loads(res.stdout)
    assert (got["state"], got["run"], got["check"]) == ("set_back", "run-5", "plain_id_range_min")
    assert [e["event"] for e in got["events"]] == ["TABLE_BUILD_FAILED", "CHECK_FAILED"]

    # a SQLMesh run that started before the failure (RUN_ENVIRONMENT) though its mart row is
    # stamped with a later execution time is no later build
    _mart_run(project, "SQLMESH_RUN: r6", "2026-12-02 00:00:00")
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_events values ('e-r6', 'RUN_ENVIRONMENT', 'SQLMESH_RUN: r6', null, null, 'prod', "
                "null, null, '2026-12-01 11:30:00')")
    con.close()
    assert json.loads(table(project, spec, "get", "plain", "--json").stdout)["state"] == "set_back"

    # a build after the failure that wrote the quality history published it
    _mart_run(project, "run-7", "2026-12-02 09:00:00")
    res = table(project, spec, "get", "plain")
    assert (res.exit_code, res.stdout.splitlines()[0]) == (0, "plain: published"), res.output


RUN2, RUN3 = "SQLMESH_RUN: 3333cccc", "SQLMESH_RUN: 4444dddd"
SHOP_READS_PLAIN = ENTITIES.replace("      city: {type: string}\n", "      city: {type: string}\n      plain_id: {type: string}\n"
                                    "    quarantine: {retention: 30d}\n    quality:\n      - {rule: referential, via: shop_of_plain, on_missing: flag}\n") + (
    "relationships:\n  - {name: shop_of_plain, from: shop, to: plain, via: {plain_id: plain_id}}\n")


def skipped_below_plain(run: str) -> str:
    """`shop`'s line when SQLMesh skipped it in `run`, below `plain`'s failed check."""
    return (f"shop: set back by the latest build (run {run}): it was not written because its upstream entity plain did "
            "not pass check ENOUGH_PLAIN; the previous version is still published")


def _plain_failed_in_run2(project: Path, spec: Path) -> None:
    """shop reads plain; PLAN1 built and published both, then RUN2 failed plain's blocking check."""
    (spec / "entities.yml").write_text(SHOP_READS_PLAIN)
    (spec / "shops.yml").write_text(MAPPING.format(name="shop").replace("unmapped", 'fields:\n  plain_id: {from: "$.p"}\nunmapped'))
    failed_plan(project, plans=(PLAN1, RUN2))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create table silver.shop (shop_id varchar)")  # PLAN1 built and published shop
    con.execute("create table silver.plain (plain_id varchar)")
    con.execute("update assay_meta.assay_events set run_id = ? where table_name = 'plain'", [RUN2])
    con.execute("update assay_meta.assay_events set occurred_at = '2026-12-02 10:00:02' where table_name = 'plain'")
    con.close()


def test_an_entity_sqlmesh_skipped_below_a_failed_parent_is_set_back_naming_it(setup):
    """Decision 0963 (an outside tester's logistics lake on PostgreSQL 18): a `sqlmesh run` failed a
    blocking check of `plain`, evaluated in place; SQLMesh skipped `shop`, which reads it, and
    recorded nothing for it. dbt says of the same build that shop was set back because its upstream
    failed (0940); SQLMesh's state said `published`, as if this run had published it."""
    project, spec = setup
    _plain_failed_in_run2(project, spec)
    res = table(project, spec, "get", "shop", "--json")
    assert res.exit_code == 2, res.output
    got = json.loads(res.stdout)
    assert {k: got[k] for k in ("state", "run", "check", "why", "upstream", "check_table")} == {
        "state": "set_back", "run": RUN2, "check": "ENOUGH_PLAIN", "why": "upstream_failed", "upstream": "plain",
        "check_table": "plain"}
    assert shop_line(table(project, spec, "list").stdout) == skipped_below_plain(RUN2)

    # a later run that evaluated shop records its results: published again
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("insert into assay_meta.assay_check_results select ?, table_name, check_id, check_position, kind, enforcement, "
                "passed, row_count, check_spec, measures, '2026-12-03 10:00:01' from assay_meta.assay_check_results", [RUN3])
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == "shop: published"


def test_an_entity_without_checks_sqlmesh_skipped_below_a_failed_parent_is_listed(setup):
    """An outside tester (session 43): `vehicle` has no checks of its own; SQLMesh skipped it below
    a parent whose `fail` rule stopped the run. dbt lists it set back (its hook records the skip);
    on SQLMesh `table list` left it out and `table get vehicle` said it has no checks (exit 3)."""
    project, spec = setup
    (spec / "checks" / "silver" / "shop" / "no_nowhere.sql").unlink()
    _plain_failed_in_run2(project, spec)
    _mart_run(project, PLAN1, "2026-12-01 10:00:00")  # the plan that built shop
    listed = table(project, spec, "list").stdout
    assert shop_line(listed) == (
        f"shop: set back by the latest build (run {RUN2}): it was not written because its upstream entity plain did not "
        "pass check ENOUGH_PLAIN; the previous version is still published"), listed
    res = table(project, spec, "get", "shop")
    assert res.exit_code == 2, res.output


def _plain_failed_in_run3(setup) -> tuple[Path, Path, "duckdb.DuckDBPyConnection"]:
    """shop reads plain; PLAN1 built and published both, RUN3 failed plain's blocking check; the
    connection is left open for what RUN2 did to shop."""
    project, spec = setup
    (spec / "entities.yml").write_text(SHOP_READS_PLAIN)
    (spec / "shops.yml").write_text(MAPPING.format(name="shop").replace("unmapped", 'fields:\n  plain_id: {from: "$.p"}\nunmapped'))
    failed_plan(project, plans=(PLAN1, RUN2, RUN3))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create table silver.shop (shop_id varchar)")
    con.execute("create table silver.plain (plain_id varchar)")
    con.execute("update assay_meta.assay_events set run_id = ?, occurred_at = '2026-12-03 10:00:02' "
                "where table_name = 'plain'", [RUN3])
    return project, spec, con


def test_a_table_published_failing_that_a_later_run_skipped_names_both_runs(setup):
    """An outside tester (session 43): run 2 failed `shop`'s blocking check, evaluated in place;
    run 3 failed `plain` and skipped `shop`. `table list` said `published although the latest build
    (run 2) did not pass`: run 2 is not the latest build, and the latest did not write shop."""
    project, spec, con = _plain_failed_in_run3(setup)
    con.execute("insert into assay_meta.assay_check_results select ?, table_name, check_id, check_position, kind, enforcement, "
                "false, 1, check_spec, '{\"rows\": 1, \"failing_rows\": 1}', '2026-12-02 10:00:01' "
                "from assay_meta.assay_check_results where table_name = 'shop'", [RUN2])
    for kind, why in (("CHECK_FAILED", "returned 1 row"), ("TABLE_BUILD_FAILED", "wrote sqlmesh__silver.silver__shop__9")):
        con.execute("insert into assay_meta.assay_events values (?, ?, ?, 'shop', 'silver.shop/no_nowhere', ?, null, null, "
                    "'2026-12-02 10:00:02')", [f"s-{kind}", kind, RUN2, why])
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == (
        f"shop: published although the build of run {RUN2} did not pass check silver.shop/no_nowhere: SQLMesh evaluated it "
        f"in place, so readers see the rows that failed; the latest build (run {RUN3}) did not write it because its "
        "upstream entity plain did not pass check ENOUGH_PLAIN")


def test_a_table_set_back_by_its_own_stop_that_a_later_run_skipped_names_the_later_run(setup):
    """An outside tester (session 48): run 2 stopped `shop` on its own staged model (a `fail` rule,
    not written); run 3 failed `plain` and skipped `shop`. `table get shop` named run 2 and shop's
    own rule, fixed since, and hid the parent that now stops it."""
    project, spec, con = _plain_failed_in_run3(setup)
    for kind, why in (("CHECK_FAILED", "1 row failed rule big (on_fail: fail)"), ("TABLE_BUILD_FAILED", "not_written")):
        con.execute("insert into assay_meta.assay_events values (?, ?, ?, 'shop', 'big', ?, null, null, "
                    "'2026-12-02 10:00:02')", [f"s-{kind}", kind, RUN2, why])
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == skipped_below_plain(RUN3)
    # run 3 failing on shop's own stop again is shop's own set-back, not a skip
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("update assay_meta.assay_events set run_id = ?, occurred_at = '2026-12-03 10:00:01' "
                "where table_name = 'shop'", [RUN3])
    con.close()
    assert shop_line(table(project, spec, "list").stdout) == (
        f"shop: set back by the latest build (run {RUN3}): check big did not pass; the previous version is still published")
