"""Keep (002 "Keeping a table") and errored SQL checks on the dbt target, on DuckDB, PG18 and PG15
(decisions 0510-0513). One story per engine, one dbt build per step:

1. a good load publishes; the warn check of `item` errors at run time (a text cast to int): it is
   recorded `errored` with the engine's message and the run goes on;
2. a shop in 'Nowhere' fails the keep check of `shop`: the data is published, the node fails
   naming the check, the reader (item's staged model) is skipped, the table is kept;
3. a run that does not rebuild `shop`: the reader's check task runs the keep check again on the
   published table, it fails, and the reader is refused with the table, the run and the check;
4. the check is fixed in the spec (and a blocking check that errors is added to `item`): the check
   task passes and clears the mark, the reader builds, and `item` is set back by its errored
   blocking check;

Every step asserts the events written and `assay table list|get --json`.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("keep on a table assay builds (the mark, the refused reader, the clearing); in the fast loop test_table_checks_dbt.py runs a keep check on a source: run this file when you touch keep"),
]

ENTITIES = """\
spec_version: 1
entities:
  shop:
    grain: one row per shop
    key: [shop_id]
    fields:
      shop_id: {type: string, required: true}
      city: {type: string}
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
relationships:
  - {name: item_of_shop, from: item, to: shop, via: {shop_id: shop_id}, cardinality: many_to_one}
"""
SHOPS_MAPPING = """\
mapping_version: 1
source: raw_shops
target: shop
key:
  shop_id: {from: "$.id"}
fields:
  city: {from: "$.city"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
ITEMS_MAPPING = """\
mapping_version: 1
source: raw_items
target: item
key:
  item_id: {from: "$.id"}
fields:
  shop_id: {from: "$.shop"}
  name: {from: "$.name"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
KEEP = """/* assay
on_failure: keep
description: No shop may be in Nowhere.
*/
select s.shop_id from silver.shop as s where s.city = '{city}'
"""
# Errors at run time on every engine: an item name is no integer.
WARN_ERRORS = """/* assay
on_failure: warn
*/
select * from silver.item where cast(name as int) > 0
"""
BLOCK_ERRORS = """/* assay
on_failure: block
*/
select * from silver.item where cast(name as int) < 0
"""
META = ["_load_id", "_ingested_at", "_source_row_id"]
T1, T2 = "2026-02-01T08:00:00Z", "2026-02-02T08:00:00Z"
S1 = ["l1", T1, "s1", "S1", "Oslo"]
S2 = ["l2", T2, "s2", "S2", "Nowhere"]
I1 = ["l1", T1, "a1", "i1", "S1", "apple"]


def shops(*rows):
    return Relation("raw_shops", META + ["id", "city"], [list(r) for r in rows])


def items(*rows):
    return Relation("raw_items", META + ["id", "shop", "name"], [list(r) for r in rows])


def _write_spec(spec, keep_city="Nowhere", checks=True, block_errors=False):
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "shops.yml").write_text(SHOPS_MAPPING)
    (spec / "items.yml").write_text(ITEMS_MAPPING)
    for d in ("shop", "item"):
        folder = spec / "checks" / "silver" / d
        folder.mkdir(parents=True, exist_ok=True)
        for f in folder.glob("*.sql"):
            f.unlink()
    if checks:
        (spec / "checks" / "silver" / "shop" / "no_nowhere.sql").write_text(KEEP.format(city=keep_city))
        (spec / "checks" / "silver" / "item" / "name_is_number.sql").write_text(WARN_ERRORS)
    if block_errors:
        (spec / "checks" / "silver" / "item" / "name_not_negative.sql").write_text(BLOCK_ERRORS)


def run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def nodes(project) -> dict[str, tuple[str, str]]:
    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    return {r["unique_id"]: (r["status"], r.get("message") or "") for r in results}


def events(project, run) -> list[tuple]:
    return sorted(project.query(
        "select event_type, table_name, check_name, why from assay_meta.assay_events "
        f"where run_id = '{run}'"))


def table_cli(project, *args) -> tuple[int, object]:
    spec = project.path.parent / "spec"
    res = CliRunner().invoke(cli, ["table", *args, "--project", str(project.path), "--spec", str(spec), "--json"])
    return res.exit_code, (json.loads(res.stdout) if res.stdout.strip() else res.output)


def results(project, run) -> dict[str, tuple[bool, str]]:
    res = CliRunner().invoke(cli, ["checks", run, "--project", str(project.path), "--json"])
    return {r["check_id"]: (r["passed"], r["detail"]) for r in json.loads(res.stdout)}


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine):
    """The five builds of one engine, each step's observations kept for the tests below."""
    root = tmp_path_factory.mktemp(f"keep_{engine.id}")
    spec = root / "spec"
    spec.mkdir()
    _write_spec(spec)
    project = engine.dbt_project(root / "proj", spec, f"keep_{engine.id}")
    seen = {}

    def step(name, *dbt_args):
        proc = project.dbt(*dbt_args)
        rid = run_id(project)
        seen[name] = {"rc": proc.returncode, "run": rid, "nodes": nodes(project), "events": events(project, rid),
                      "list": table_cli(project, "list"), "shop": table_cli(project, "get", "shop"),
                      "results": results(project, rid), "stdout": proc.stdout}

    project.load_bronze([shops(S1), items(I1)])
    step("good", "build")
    seen["good"]["items"] = project.query('select item_id from silver."item"')
    project.load_bronze([shops(S1, S2), items(I1)])
    step("kept", "build")
    seen["kept"]["shops"] = sorted(project.query('select shop_id, city from silver."shop"'))
    step("refused", "build", "--exclude", "shop")
    _write_spec(spec, keep_city="Atlantis", block_errors=True)
    assert not generate_dbt_project(spec, project.path).report.conflicts
    step("cleared", "build", "--exclude", "shop")
    seen["project"], seen["spec"] = project, spec
    return seen


def test_an_erroring_warn_check_is_a_result_and_the_run_goes_on(story):
    good = story["good"]
    assert good["rc"] == 0, good["stdout"][-4000:]
    assert good["items"] == [("i1",)]  # published despite its warn check erroring
    passed, detail = good["results"]["NAME_IS_NUMBER"]
    assert passed is False
    assert detail.startswith("errored: ")
    # the engine's own message: DuckDB's conversion error, PostgreSQL's invalid input syntax
    assert ("Could not convert string 'apple'" in detail) or ('invalid input syntax for type integer: "apple"' in detail), detail
    assert ("CHECK_FAILED", "item", "silver.item/name_is_number", detail) in good["events"]
    assert good["list"] == (0, [
        {"table": "item", "state": "published", "run": None, "check": None, "why": None, "since": None, "built_by_project": True},
        {"table": "shop", "state": "published", "run": None, "check": None, "why": None, "since": None, "built_by_project": True},
    ])


def test_a_failing_keep_check_publishes_fails_the_node_and_marks_the_table(story):
    kept = story["kept"]
    assert kept["rc"] != 0
    status, message = kept["nodes"]["model.assay_it.shop"]
    assert status == "error"
    assert f"TABLE_KEPT: " in message and f"was published and kept by run {kept['run']}: check silver.shop/no_nowhere failed" in message, message
    assert kept["nodes"]["model.assay_it.item__staged"][0] == "skipped"
    assert kept["shops"] == [("S1", "Oslo"), ("S2", "Nowhere")]  # the data is published
    assert ("TABLE_KEPT", "shop", "silver.shop/no_nowhere", "keep_check_failed") in kept["events"]
    assert ("CHECK_FAILED", "shop", "silver.shop/no_nowhere", "returned 1 row") in kept["events"]
    code, shop = kept["shop"]
    assert code == 2
    assert {k: shop[k] for k in ("table", "state", "run", "check")} == {
        "table": "shop", "state": "kept", "run": kept["run"], "check": "silver.shop/no_nowhere"}


def test_a_reader_is_refused_after_the_check_task_fails_again(story):
    kept, refused = story["kept"], story["refused"]
    assert refused["rc"] != 0
    status, message = refused["nodes"]["model.assay_it.item__staged"]
    assert status == "error"
    assert (f"KEPT_TABLE_REFUSED: item__staged reads " in message and f"which is kept since run {kept['run']} "
            "(check silver.shop/no_nowhere failed); its checks ran again in this run and did not pass: "
            "silver.shop/no_nowhere: failed (kept)") in message, message
    assert "model.assay_it.shop" not in refused["nodes"]  # not rebuilt
    assert refused["events"] == [("CHECK_FAILED", "shop", "silver.shop/no_nowhere", "returned 1 row")]
    assert refused["results"]["NO_NOWHERE"] == (False, "returned 1 row (kept)")
    assert refused["shop"][1]["state"] == "kept" and refused["shop"][1]["run"] == kept["run"]


def test_a_passing_check_task_clears_the_mark_and_an_erroring_block_check_sets_back(story):
    cleared = story["cleared"]
    assert cleared["rc"] != 0  # item's blocking check errored
    assert cleared["nodes"]["model.assay_it.item__staged"][0] == "success"
    status, message = cleared["nodes"]["model.assay_it.item"]
    assert status == "error"
    assert "CHECK_FAILED: silver.item/name_not_negative: errored: " in message, message
    assert ("TABLE_KEPT_CLEARED", "shop", "silver.shop/no_nowhere", "checks_passed") in cleared["events"]
    assert ("TABLE_ROLLED_BACK", "item", "silver.item/name_not_negative", "previous_version_kept") in cleared["events"]
    assert cleared["results"]["NO_NOWHERE"] == (True, "returned no rows, as expected")
    assert cleared["results"]["NAME_NOT_NEGATIVE"][0] is False
    assert cleared["results"]["NAME_NOT_NEGATIVE"][1].startswith("errored: ")
    code, shop = cleared["shop"]
    assert (code, {k: v for k, v in shop.items() if k != "events"}) == (
        0, {"table": "shop", "state": "published", "run": None, "check": None, "why": None, "since": None, "built_by_project": True})
    # `table get` then gives the table's history, newest first: the clearing, then what kept it
    history = [(e["event"], e["why"]) for e in shop["events"]]
    assert history[0] == ("TABLE_KEPT_CLEARED", "checks_passed") and ("TABLE_KEPT", "keep_check_failed") in history, history



def test_a_rebuild_without_checks_clears_the_mark(story, engine):
    if engine.id != "duckdb":
        pytest.skip("the clearing by a rebuild is engine-independent Jinja; proven on DuckDB to keep the suite short")
    project, spec = story["project"], story["spec"]
    _write_spec(spec)  # the keep check fails again on the published Nowhere shop
    assert not generate_dbt_project(spec, project.path).report.conflicts
    assert project.dbt("build", "--select", "shop").returncode != 0
    rekept = run_id(project)
    assert events(project, rekept) == [("CHECK_FAILED", "shop", "silver.shop/no_nowhere", "returned 1 row"),
                                       ("TABLE_KEPT", "shop", "silver.shop/no_nowhere", "keep_check_failed")]
    assert table_cli(project, "get", "shop")[1]["run"] == rekept

    _write_spec(spec, checks=False)  # a project version with no checks for the shop rebuilds it
    assert not generate_dbt_project(spec, project.path).report.conflicts
    proc = project.dbt("build", "--select", "shop")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert events(project, run_id(project)) == [("TABLE_KEPT_CLEARED", "shop", "silver.shop/no_nowhere", "rebuilt_without_checks")]
    # no table has checks any more; `item`, whose last build its check set back and which no build
    # of this project version wrote, stays set back until one does (decision 0957)
    code, listed = table_cli(project, "list")
    assert (code, [(t["table"], t["state"]) for t in listed]) == (0, [("item", "set_back")])
