"""Set-back, proven on DuckDB (DESIGN section 4, docs/checks.md).

What a set-back does is the same `assay_entity` materialization whatever check failed; its
PostgreSQL spelling (the candidate kept, the published table untouched, nothing resolved) is
proven there by test_declared_checks_dbt.py (a required check) and test_anomaly_shift_dbt.py (an
anomaly), so the three kinds of check here run on DuckDB only (tests/README.md, "What runs where").

For each kind of blocking check of an entity on the dbt target:

  (a) a generated blocking audit (key uniqueness of an entity without dedupe),
  (b) a `required` declared check (value_range),
  (c) a `block` SQL check file,

a first build publishes; a second load makes that one check fail; then the published entity
still holds exactly its previous contents (every column, row for row), the candidate relation
holds the failing rows, the open reject rows are untouched and nothing is resolved, the run
reports that check by name with `CHECK_FAILED`, nothing downstream is built; and a third, good
load publishes again (and only then resolves the reject row the refused build would have
admitted).

Each scenario builds in a warehouse of its own, so no test depends on another or on the order.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("one set-back per kind of blocking check; in the fast loop test_anomaly_shift_dbt.py and test_declared_checks_dbt.py set an entity back"),
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
      price: {type: "decimal(10,2)"}
      qty: {type: int}
    quarantine: {retention: 30d}
    quality:
      - {rule: referential, via: item_of_shop, on_missing: quarantine}
    checks:
      - {check_id: price_in_range, kind: value_range, enforcement: required, columns: [price], min_value: "0", max_value: "1000"}
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
  price: {from: "$.price", transform: [{to_decimal: [10, 2]}]}
  qty:
    from: "$.qty"
    transform: [to_int]
    quality:
      - {rule: range, min: 0, on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
SQL_CHECK = """\
/* assay
on_failure: block
description: No item may be called 'banned'.
*/
select i.item_id, i.name from silver.item as i where i.name = 'banned'
"""

META = ["_load_id", "_ingested_at", "_source_row_id"]
SHOP_COLS = META + ["id", "city"]
ITEM_COLS = META + ["id", "shop", "name", "price", "qty"]
T1, T2, T3 = "2026-02-01T08:00:00Z", "2026-02-02T08:00:00Z", "2026-02-03T08:00:00Z"
S1 = ["l1", T1, "s1", "S1", "Oslo"]
S2 = ["l2", T2, "s2", "S2", "Rome"]  # arrives with the second load: the orphan i3 becomes admissible
LOAD1 = [
    ["l1", T1, "a1", "i1", "S1", "apple", "1.50", "3"],   # kept
    ["l1", T1, "a2", "i2", "S1", "pear", "2.00", "-1"],   # quarantined: qty below 0 (stays open)
    ["l1", T1, "a3", "i3", "S2", "plum", "3.00", "5"],    # quarantined: no shop S2 yet
]
# One bad row per scenario, each delivered once (a new _source_row_id: no re-delivery).
BAD = {
    "key_unique": ["l2", T2, "b1", "i1", "S1", "apple again", "1.75", "1"],   # i1 twice, no dedupe
    "price_in_range": ["l2", T2, "b2", "i9", "S1", "gold", "5000.00", "1"],  # above the maximum 1000
    "no_banned_names": ["l2", T2, "b3", "i8", "S1", "banned", "1.00", "1"],  # the SQL check's rows
}
GOOD3 = ["l3", T3, "c1", "i4", "S1", "fig", "4.25", "2"]
# What the check reports, and the candidate rows that make it fail (item_id, _source_row_id).
REPORTED = {
    "key_unique": ("KEY_UNIQUE: 1 violating row", {("i1", "a1"), ("i1", "b1")}),
    "price_in_range": ("PRICE_IN_RANGE: column 'price' holds '5000', above the declared maximum of 1000", {("i9", "b2")}),
    "no_banned_names": ("silver.item/no_banned_names: returned 1 row", {("i8", "b3")}),
}
FAILED = re.compile(r"CHECK_FAILED: (.*)\. \S+ was not published(?:; its previous version is still published)?; the failing candidate is (\S+)\.")


def shops(*rows):
    return Relation("raw_shops", SHOP_COLS, [list(r) for r in rows])


def items(*rows):
    return Relation("raw_items", ITEM_COLS, [list(r) for r in rows])


def _spec(root):
    spec = root / "spec"
    (spec / "checks" / "silver" / "item").mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "shops.yml").write_text(SHOPS_MAPPING)
    (spec / "items.yml").write_text(ITEMS_MAPPING)
    (spec / "checks" / "silver" / "item" / "no_banned_names.sql").write_text(SQL_CHECK)
    return spec


def run_results(project) -> dict:
    return json.loads((project.path / "target" / "run_results.json").read_text())


def node_results(project) -> dict[str, tuple[str, str]]:
    """unique_id -> (status, message) of the last dbt invocation."""
    return {r["unique_id"]: (r["status"], r.get("message") or "") for r in run_results(project)["results"]}


def published(project) -> list[tuple]:
    return project.query('select * from silver."item" order by _source_row_id')


def columns(project, relation: str) -> list[str]:
    schema, table = relation.split(".")
    return [r[0] for r in project.query(
        "select column_name from information_schema.columns "
        f"where table_schema = '{schema}' and table_name = '{table}' order by ordinal_position")]


def rejects(project) -> dict[str, dict]:
    cols = columns(project, "silver.item__reject")
    return {r[cols.index("_source_row_id")]: dict(zip(cols, r)) for r in project.query('select * from silver."item__reject"')}


def _engine_project(tmp_path, engine, pg):
    root = tmp_path
    return make_project(root / "proj", _spec(root), engine=engine, pg=pg)


class SetBack:
    @pytest.mark.parametrize("check", sorted(BAD))
    def test_a_failing_blocking_check_sets_the_entity_back(self, check, new_project):
        project = new_project(check)

        # 1. A good load publishes: i1 kept, i2 and i3 quarantined.
        project.load_bronze([shops(S1), items(*LOAD1)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        before = published(project)
        item_cols = columns(project, "silver.item")
        assert [(r[item_cols.index("item_id")], r[item_cols.index("_source_row_id")],
                 r[item_cols.index("price")], r[item_cols.index("qty")]) for r in before] == [("i1", "a1", Decimal("1.50"), 3)]
        rej_before = rejects(project)
        run1 = run_results(project)["metadata"]["invocation_id"]
        assert {s: (list(r["failed_rules"]), r["resolved_at"]) for s, r in rej_before.items()} == {
            "a2": (["qty_range_min"], None), "a3": (["item_of_shop_referential"], None)}

        # 2. The second load breaks exactly one blocking check (and brings shop S2, so a
        #    published build would admit i3 and resolve its reject row).
        project.load_bronze([shops(S1, S2), items(*LOAD1, BAD[check])])
        proc = project.dbt("build")
        assert proc.returncode != 0, proc.stdout[-5000:]
        nodes = node_results(project)
        status, message = nodes["model.assay_it.item"]
        want, failing_rows = REPORTED[check]
        assert status == "error", (status, message)
        found = FAILED.search(message)
        assert found, message
        # it says the previous version stays (an outside tester, session 49, read only "not published")
        assert "was not published; its previous version is still published; the failing candidate" in message, message
        # exactly the broken check, with its detail; no other check failed
        assert found.group(1) == want, message
        # the other entity built, and the mart, which reads the staged rows only (decision 0413)
        assert nodes["model.assay_it.shop"][0] == "success"
        assert nodes["model.assay_it.mart_data_quality"][0] == "success"

        # the published entity is exactly what the first build published, every column
        assert published(project) == before
        # the candidate is kept and holds the failing rows (and i3, which it would have admitted)
        assert found.group(2).replace('"', "").endswith("silver.item__assay_candidate"), message
        cand_cols = columns(project, "silver.item__assay_candidate")
        assert cand_cols == item_cols
        candidate = {(r[cand_cols.index("item_id")], r[cand_cols.index("_source_row_id")])
                     for r in project.query('select * from silver."item__assay_candidate"')}
        assert failing_rows <= candidate
        assert ("i3", "a3") in candidate
        # open reject rows: nothing resolved. i3's row (no longer diverted) is untouched to the
        # last column; i2's row (still diverted, re-judged by the reject model that runs before
        # the entity) keeps every column but its evaluation stamp and the build it names, the
        # set-back one (decision 0944).
        rej_after = rejects(project)
        assert set(rej_after) == set(rej_before)
        assert rej_after["a3"] == rej_before["a3"]
        stamps = ("last_evaluated_at", "last_run_id")
        assert {k: v for k, v in rej_after["a2"].items() if k not in stamps} == \
               {k: v for k, v in rej_before["a2"].items() if k not in stamps}
        assert (rej_before["a2"]["last_run_id"], rej_after["a2"]["last_run_id"]) == (
            run1, run_results(project)["metadata"]["invocation_id"])

        # 3. A good third load publishes again: i3 admitted, its reject row resolved.
        project.load_bronze([shops(S1, S2), items(*LOAD1, GOOD3)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        after = published(project)
        assert [(r[item_cols.index("item_id")], r[item_cols.index("_source_row_id")], r[item_cols.index("shop_id")],
                 r[item_cols.index("name")], r[item_cols.index("price")], r[item_cols.index("qty")]) for r in after] == [
            ("i1", "a1", "S1", "apple", Decimal("1.50"), 3),
            ("i3", "a3", "S2", "plum", Decimal("3.00"), 5),
            ("i4", "c1", "S1", "fig", Decimal("4.25"), 2),
        ]
        rej3 = rejects(project)
        assert (rej3["a3"]["resolution"], rej3["a3"]["resolved_at"] is not None) == ("admitted", True)
        assert (rej3["a2"]["resolution"], rej3["a2"]["resolved_at"]) == (None, None)
        assert not project.query(
            "select table_name from information_schema.tables "
            "where table_schema = 'silver' and table_name = 'item__assay_candidate'")


class TestSetBackDuckDB(SetBack):
    @pytest.fixture
    def new_project(self, tmp_path):
        return lambda check: _engine_project(tmp_path, "duckdb", None)
