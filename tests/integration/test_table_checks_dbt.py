"""Checks of tables assay only reads (`tables_version: 1`) on the dbt target (decision 0520).

One spec, three builds per engine (DuckDB, PostgreSQL 18, PostgreSQL 15):

1. the bronze source `bronze.raw_orders` breaks its `required` declared check (a null id), its
   `block` SQL check (a TEST customer) and its `keep` SQL check (a blank amount): its check
   task fails naming the three, every assay model that extracts from it and everything after
   them is skipped, an unrelated entity builds, nothing is set back, and every result is
   recorded with passed=false (a `warn` check whose query errors is recorded `errored` and does
   not stop the task; an advisory check of `bronze.raw_shops` names a column the table lacks and
   is recorded unreadable in every build without stopping anything);
2. the source is clean: everything builds and every check passes, including the checks of the
   user's own models (`marts.customer_totals`, checked by its check task right after it is
   built, and `marts.order_amounts`, which opted into write-audit-publish);
3. an order of 5000 breaks the range check of `marts.order_amounts`: that model is set back
   (it still holds build 2's rows, the failing candidate is kept), its reader is skipped, and
   its check task leaves the checks to the model's own publish step.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support import dbtresults
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  order:
    grain: one row per order
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
      customer_id: {type: string}
      amount: {type: "decimal(12,2)"}
  shop:
    grain: one row per shop
    key: [shop_id]
    fields:
      shop_id: {type: string, required: true}
      city: {type: string}
"""
ORDERS = """\
mapping_version: 1
source: raw_orders
target: order
key:
  order_id: {from: "$.id"}
fields:
  customer_id: {from: "$.customer"}
  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}]}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
SHOPS = """\
mapping_version: 1
source: raw_shops
target: shop
key:
  shop_id: {from: "$.id"}
fields:
  city: {from: "$.city"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
TABLES = """\
tables_version: 1
tables:
  bronze.raw_orders:
    grain: [id]
    columns: [id, customer, amount]
    checks:
      - {check_id: ids_present, kind: null_ceiling, enforcement: required, columns: [id], max_null_ppm: 0}
      - {check_id: some_orders, kind: row_expectation, enforcement: advisory, min_rows: 1}
  bronze.raw_shops:
    columns: [id, city, zip]
    checks:
      # raw_shops has no zip column: recorded as unreadable, advisory, so its readers still build
      - {check_id: zips_present, kind: null_ceiling, enforcement: advisory, columns: [zip], max_null_ppm: 0}
  marts.customer_totals:
    grain: [customer_id]
    columns: [customer_id, total]
    checks:
      - {check_id: one_per_customer, kind: key_uniqueness, enforcement: required}
  marts.order_amounts:
    grain: [order_id]
    columns: [order_id, amount]
    checks:
      - {check_id: amount_in_range, kind: value_range, enforcement: required, columns: [amount], min_value: "0", max_value: "1000"}
"""
NO_TEST_CUSTOMERS = """\
/* assay
on_failure: block
description: Test traffic never reaches bronze.
*/
select o.id from bronze.raw_orders as o where o.customer = 'TEST'
"""
NO_BLANK_AMOUNTS = """\
/* assay
on_failure: keep
*/
select * from raw_orders where amount = ''
"""
# A warn check whose query errors on a blank amount: recorded `errored`, and the task goes on.
AMOUNTS_NUMERIC = """\
/* assay
on_failure: warn
*/
select * from bronze.raw_orders where cast(amount as decimal(12, 2)) < 0
"""
# A check file of the model that opted into write-audit-publish: its result and the model's
# events are recorded under `marts.order_amounts`, as the tables document names it (they were
# recorded as `marts__order_amounts`, which `assay table get` did not read; an outside tester).
BIG_AMOUNTS = """\
/* assay
on_failure: warn
*/
select * from marts.order_amounts where amount > 900
"""
# The user's own models: a plain table checked by its check task, and one that opted into
# write-audit-publish through assay's materialization (docs/checks.md), with a reader.
CUSTOMER_TOTALS = """\
{{ config(materialized='table', schema='marts') }}
select customer_id, sum(amount) as total from {{ ref('order') }} group by customer_id
"""
ORDER_AMOUNTS = """\
{{ config(materialized='assay_entity', schema='marts', assay_audits='assay_audits__marts__order_amounts', assay_meta_schema='assay_meta') }}
select order_id, amount from {{ ref('order') }}
"""
ORDER_REPORT = """\
{{ config(materialized='table', schema='marts') }}
select count(*) as orders from {{ ref('order_amounts') }}
"""

META = ["_load_id", "_ingested_at", "_source_row_id"]
T1 = "2026-02-01T08:00:00Z"
GOOD = [["l1", T1, "r1", "o1", "c1", "10.00"], ["l1", T1, "r2", "o2", "c1", "20.50"], ["l1", T1, "r3", "o3", "c2", "7.25"]]
BAD_SOURCE = GOOD + [["l1", T1, "r4", None, "c3", "1.00"],     # ids_present: a null id
                     ["l1", T1, "r5", "o5", "TEST", "2.00"],  # no_test_customers (block)
                     ["l1", T1, "r6", "o6", "c4", ""]]        # no_blank_amounts (keep)
BAD_MODEL = GOOD + [["l2", T1, "r7", "o7", "c2", "5000.00"]]  # amount_in_range of marts.order_amounts
SHOP_ROWS = [["l1", T1, "s1", "S1", "Oslo"]]

P = "model.assay_it."
TASK = P + "assay_checks__bronze__raw_orders"
TOTALS_TASK = P + "assay_checks__marts__customer_totals"
AMOUNTS_TASK = P + "assay_checks__marts__order_amounts"


def _spec(root: Path) -> Path:
    spec = root / "spec"
    (spec / "checks" / "bronze" / "raw_orders").mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "orders.yml").write_text(ORDERS)
    (spec / "shops.yml").write_text(SHOPS)
    (spec / "tables.yml").write_text(TABLES)
    (spec / "checks" / "bronze" / "raw_orders" / "no_test_customers.sql").write_text(NO_TEST_CUSTOMERS)
    (spec / "checks" / "bronze" / "raw_orders" / "no_blank_amounts.sql").write_text(NO_BLANK_AMOUNTS)
    (spec / "checks" / "bronze" / "raw_orders" / "amounts_numeric.sql").write_text(AMOUNTS_NUMERIC)
    (spec / "checks" / "marts" / "order_amounts").mkdir(parents=True)
    (spec / "checks" / "marts" / "order_amounts" / "big_amounts.sql").write_text(BIG_AMOUNTS)
    return spec


def _load(project, orders):
    project.load_bronze([Relation("raw_orders", META + ["id", "customer", "amount"], orders),
                         Relation("raw_shops", META + ["id", "city"], SHOP_ROWS)])


def _recorded(project, run_id: str) -> dict[tuple[str, str], tuple]:
    rows = project.query("select table_name, check_id, enforcement, passed from assay_meta.assay_check_results "
                         f"where run_id = '{run_id}'")
    return {(t, c): (e, bool(p)) for t, c, e, p in rows}


def _not_ok(statuses: dict) -> dict:
    return {uid: s for uid, s in statuses.items() if s not in ("success", "pass")}


def _cli(*args):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def builds(tmp_path_factory, engine) -> dict:
    """The three builds of one engine, observed right after each."""
    root = tmp_path_factory.mktemp(f"table_checks_{engine.id}")
    project = engine.dbt_project(root / "project", _spec(root), "table_checks_dbt")
    marts = project.path / "models" / "marts"
    marts.mkdir(parents=True)
    (marts / "customer_totals.sql").write_text(CUSTOMER_TOTALS)
    (marts / "order_amounts.sql").write_text(ORDER_AMOUNTS)
    (marts / "order_report.sql").write_text(ORDER_REPORT)
    out = {"project": project}
    for label, orders in (("bad_source", BAD_SOURCE), ("good", GOOD), ("bad_model", BAD_MODEL)):
        _load(project, orders)
        proc = project.dbt("build")
        run_id = dbtresults.run_results(project)["metadata"]["invocation_id"]
        obs = {"rc": proc.returncode, "log": proc.stdout[-6000:], "run_id": run_id,
               "nodes": dbtresults.nodes(project), "statuses": dbtresults.statuses(project),
               "recorded": _recorded(project, run_id),
               "bronze_rows": project.query("select count(*) from bronze.raw_orders")[0][0],
               "events": sorted(project.query("select event_type, table_name, check_name from assay_meta.assay_events "
                                              f"where run_id = '{run_id}'")),
               "checks": _cli("checks", run_id, "--project", str(project.path), "--json"),
               "amounts": sorted(project.query("select order_id, amount from marts.order_amounts"))
               if label != "bad_source" else None}
        if label == "bad_source":
            obs["rows"] = _cli("check", "rows", run_id, "IDS_PRESENT", "--project", str(project.path), "--json")
            obs["order_state"] = _cli("table", "get", "order", "--project", str(project.path), "--spec", str(root / "spec"))
        if label == "bad_model":
            obs["candidate"] = sorted(project.query('select order_id, amount from marts."order_amounts__assay_candidate"'))
            obs["table_get"] = _cli("table", "get", "marts.order_amounts", "--project", str(project.path),
                                    "--spec", str(root / "spec"), "--json")
        out[label] = obs
    out["list"] = _cli("check", "list", "--project", str(project.path), "--json")
    return out


def test_a_failing_source_check_stops_its_readers(builds):
    b = builds["bad_source"]
    assert b["rc"] != 0, b["log"]
    st = b["statuses"]
    assert st[TASK] == "error", b["log"]
    # everything that reads raw_orders, directly or through the order entity, was skipped
    assert b["recorded"][("bronze.raw_shops", "ZIPS_PRESENT")] == ("advisory", False)
    skipped = ("order__staged", "order", "customer_totals", "order_amounts", "order_report",
               "assay_checks__marts__customer_totals", "assay_checks__marts__order_amounts", "mart_data_quality")
    assert _not_ok(st) == {TASK: "error", **{P + n: "skipped" for n in skipped}}
    # an entity that does not read it built
    assert st[P + "shop"] == "success"
    message = next(line.strip() for line in b["nodes"][TASK]["message"].splitlines() if "CHECK_FAILED: " in line)
    assert message.startswith("CHECK_FAILED: IDS_PRESENT: "), message
    assert "bronze.raw_orders/no_test_customers: returned 1 row;" in message
    assert "bronze.raw_orders/no_blank_amounts: returned 1 row (keep: bronze.raw_orders is not built by assay, so it is not marked)" in message
    assert message.endswith("bronze.raw_orders is a table assay only reads: nothing was set back, and what reads it was not built."), message
    assert "SOME_ORDERS" not in message  # advisory, and it passed
    assert {k: v for k, v in b["recorded"].items() if k[0] == "bronze.raw_orders"} == {
        ("bronze.raw_orders", "IDS_PRESENT"): ("required", False),
        ("bronze.raw_orders", "SOME_ORDERS"): ("advisory", True),
        ("bronze.raw_orders", "bronze.raw_orders/no_test_customers"): ("block", False),
        ("bronze.raw_orders", "bronze.raw_orders/no_blank_amounts"): ("keep", False),
        ("bronze.raw_orders", "bronze.raw_orders/amounts_numeric"): ("warn", False),  # errored
    }
    assert "amounts_numeric" not in message  # a warn check that errors does not stop the task
    # each failed or errored SQL check and failed required check is a CHECK_FAILED event; nothing was
    # set back and no mark was set (no TABLE_ROLLED_BACK, no TABLE_KEPT); the entity that extracts
    # from the source was not written, and the on-run-end hook says why (decision 1159)
    assert b["events"] == sorted([
        ("CHECK_FAILED", "bronze.raw_orders", "IDS_PRESENT"),
        ("CHECK_FAILED", "bronze.raw_orders", "bronze.raw_orders/amounts_numeric"),
        ("CHECK_FAILED", "bronze.raw_orders", "bronze.raw_orders/no_blank_amounts"),
        ("CHECK_FAILED", "bronze.raw_orders", "bronze.raw_orders/no_test_customers"),
        ("TABLE_BUILD_FAILED", "order", None),
    ])
    state = b["order_state"]
    assert state.exit_code == 2, state.output
    assert state.stdout.splitlines()[0] == (
        f"order: not published: run {b['run_id']} did not write it because a blocking check of bronze.raw_orders, "
        f"which it reads, did not pass in that run (assay checks {b['run_id']} names it)"), state.stdout
    # nothing was written to the source: it holds exactly what was loaded
    assert b["bronze_rows"] == len(BAD_SOURCE) == 6


def test_assay_checks_shows_the_source_results(builds):
    res = builds["bad_source"]["checks"]
    assert res.exit_code == 2, res.output
    got = {r["check_id"]: (r["passed"], r["detail"]) for r in json.loads(res.stdout)}
    # a declared column the table lacks: recorded unreadable (000), on every engine
    unreadable = got.pop("ZIPS_PRESENT")
    assert unreadable[0] is False and unreadable[1].startswith("DECLARED_CHECK_UNREADABLE: "), unreadable
    assert "zip" in unreadable[1], unreadable
    assert got == {
        "IDS_PRESENT": (False, "column 'id' is 166667 ppm null (1 of 6 rows), above the declared ceiling of 0 ppm"),
        "SOME_ORDERS": (True, "row count 6 satisfies the declared minimum of 1"),
        "NO_TEST_CUSTOMERS": (False, "returned 1 row"),
        "NO_BLANK_AMOUNTS": (False, "returned 1 row (kept)"),
        "AMOUNTS_NUMERIC": (False, got["AMOUNTS_NUMERIC"][1]),
    }
    assert got["AMOUNTS_NUMERIC"][1].startswith("errored: "), got
    scopes = {r["check_id"]: r["scope"] for r in json.loads(res.stdout)}
    assert scopes["ZIPS_PRESENT"] == "bronze.raw_shops" and scopes["NO_TEST_CUSTOMERS"] == "bronze.raw_orders", scopes


def test_a_clean_source_builds_everything(builds):
    b = builds["good"]
    assert b["rc"] == 0, b["log"]
    assert not {uid: s for uid, s in b["statuses"].items() if s not in ("success", "pass")}
    unreadable = b["recorded"].pop(("bronze.raw_shops", "ZIPS_PRESENT"))
    assert unreadable == ("advisory", False)
    assert all(passed for _e, passed in b["recorded"].values()), b["recorded"]
    assert set(b["recorded"]) == {
        ("bronze.raw_orders", "IDS_PRESENT"), ("bronze.raw_orders", "SOME_ORDERS"),
        ("bronze.raw_orders", "bronze.raw_orders/no_test_customers"), ("bronze.raw_orders", "bronze.raw_orders/no_blank_amounts"),
        ("bronze.raw_orders", "bronze.raw_orders/amounts_numeric"),
        # checked by its check task, after the model was built
        ("marts.customer_totals", "ONE_PER_CUSTOMER"),
        # checked once, on the candidate of its own write-audit-publish (the task leaves it)
        ("marts.order_amounts", "AMOUNT_IN_RANGE"), ("marts.order_amounts", "marts.order_amounts/big_amounts"),
    }
    assert b["amounts"] == [("o1", Decimal("10.00")), ("o2", Decimal("20.50")), ("o3", Decimal("7.25"))]
    assert "assay: the checks of marts.order_amounts ran in its own write-audit-publish step" in b["log"]
    res = b["checks"]
    assert res.exit_code == 2, res.output  # the unreadable advisory check did not pass
    got = {r["check_id"]: r["detail"] for r in json.loads(res.stdout)}
    assert got["ONE_PER_CUSTOMER"] == "key (customer_id) is distinct across all 2 rows, as expected"
    assert got["AMOUNT_IN_RANGE"] == "column 'amount' lies within [0, 1000] across 3 non-null values of 3 rows"


def test_an_opted_in_user_model_is_set_back(builds):
    b = builds["bad_model"]
    assert b["rc"] != 0, b["log"]
    assert _not_ok(b["statuses"]) == {P + "order_amounts": "error", P + "order_report": "skipped",
                                      AMOUNTS_TASK: "skipped"}, b["statuses"]
    found = dbtresults.CHECK_FAILED.search(b["nodes"][P + "order_amounts"]["message"])
    assert found, b["nodes"][P + "order_amounts"]["message"]
    detail, candidate = found.group(1), found.group(2)
    assert detail == "AMOUNT_IN_RANGE: column 'amount' holds '5000', above the declared maximum of 1000", detail
    assert candidate.replace('"', "").endswith("marts.order_amounts__assay_candidate")
    # the published model still holds what build 2 published; the candidate holds the new rows
    assert b["amounts"] == builds["good"]["amounts"]
    assert ("o7", Decimal("5000.00")) in b["candidate"]
    assert b["recorded"][("marts.order_amounts", "AMOUNT_IN_RANGE")] == ("required", False)
    assert b["recorded"][("marts.order_amounts", "marts.order_amounts/big_amounts")] == ("warn", True)  # warned
    assert b["recorded"][("bronze.raw_orders", "IDS_PRESENT")] == ("required", True)
    assert ("TABLE_ROLLED_BACK", "marts.order_amounts", "AMOUNT_IN_RANGE") in b["events"], b["events"]
    got = json.loads(b["table_get"].stdout)
    assert b["table_get"].exit_code == 2 and got["state"] == "set_back", b["table_get"].output


def test_check_list_shows_tables_assay_only_reads(builds):
    res = builds["list"]
    assert res.exit_code == 0, res.output
    items = json.loads(res.output)
    first = builds["bad_source"]["run_id"]
    of_first = {(i["table"], i["check"]): (i["outcome"], i["rows"], i["on_failure"]) for i in items
                if i["run"] == first and i["table"] == "bronze.raw_orders"}
    assert of_first == {
        ("bronze.raw_orders", "IDS_PRESENT"): ("FAILED", 1, "required"),  # its one null row (decision 1121)
        ("bronze.raw_orders", "SOME_ORDERS"): ("passed", None, "advisory"),
        ("bronze.raw_orders", "bronze.raw_orders/no_test_customers"): ("FAILED", 1, "block"),
        ("bronze.raw_orders", "bronze.raw_orders/no_blank_amounts"): ("failed (kept)", 1, "keep"),
        ("bronze.raw_orders", "bronze.raw_orders/amounts_numeric"): ("errored", None, "warn"),
    }


def test_check_rows_shows_the_source_rows_a_check_found(builds):
    res = builds["bad_source"]["rows"]
    assert res.exit_code == 0, res.output
    items = json.loads(res.stdout)
    assert [(i["table"], i["check_id"], i["row"]["_source_row_id"], i["row"]["id"]) for i in items] == [
        ("bronze.raw_orders", "IDS_PRESENT", "r4", None)]
