"""`assay plan` classifies every difference of table checks as CHECKS (decision 1128): declared
checks (added, removed, enforcement changed, parameters tightened or relaxed), SQL check files
(added, removed, on_failure changed, query changed), coverage tests and the checks of tables assay
only reads, each with what it means for the next build; none of them is in a scope."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from assay.api import load_project
from assay.cli.main import cli
from assay.plan import CHECKS, NON_BREAKING, plan
from tests.unit.test_plan import _copy, _edit

ENOUGH = "{check_id: enough_orders, kind: row_expectation, enforcement: advisory, min_rows: 1}"
BLOCK = "/* assay\non_failure: {how}\n*/\nselect order_id from silver.order where amount < {n}\n"


def _check_file(spec: Path, name: str, how: str, n: int = 0) -> None:
    folder = spec / "checks" / "silver" / "order"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.sql").write_text(BLOCK.format(how=how, n=n))


def _changes(old: Path, new: Path) -> list[tuple]:
    p = plan(load_project(old), load_project(new))
    assert p.replay_scope == () and p.backfill_scope == (), p  # checks move no row
    return [(c.entity, c.kind, c.detail, c.classification) for c in p.changes]


def test_a_tightened_blocking_check_may_stop_publication(tmp_path):
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    _edit(old, "spec/entities.yml", ENOUGH, ENOUGH.replace("advisory", "required").replace("min_rows: 1}", "min_rows: 1, max_rows: 100000}"))
    _edit(new, "spec/entities.yml", ENOUGH, ENOUGH.replace("advisory", "required").replace("min_rows: 1}", "min_rows: 1, max_rows: 100}"))
    assert _changes(old, new) == [(
        "order", "check_changed", "ENOUGH_ORDERS (row_expectation, required): max_rows 100000 -> 100, tightened; "
        "it may stop order from being published in the next build: run with --data to see", CHECKS)]
    # the other way round it is relaxed
    [(_e, _k, detail, _c)] = _changes(new, old)
    assert detail == ("ENOUGH_ORDERS (row_expectation, required): max_rows 100 -> 100000, relaxed; "
                      "a build it stopped may now publish order: run with --data to see")


def test_declared_checks_added_removed_enforcement_and_bounds(tmp_path):
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", ENOUGH, ENOUGH.replace("advisory", "required") + "\n"
          "      - {check_id: amount_sane, kind: value_range, enforcement: required, columns: [amount], min_value: \"0\", max_value: \"9\"}")
    got = _changes(old, new)
    assert got == [
        ("order", "check_added", "AMOUNT_SANE (value_range, required): the next build publishes order only if it passes: "
         "run with --data to see", CHECKS),
        ("order", "enforcement_changed", "ENOUGH_ORDERS: advisory -> required: the next build publishes order only if it "
         "passes: run with --data to see", CHECKS),
    ]
    got = _changes(new, old)
    assert ("order", "check_removed", "AMOUNT_SANE (value_range, required): no longer stops publication of order", CHECKS) in got
    assert ("order", "enforcement_changed", "ENOUGH_ORDERS: required -> advisory: no longer stops publication of order", CHECKS) in got
    # a bound that appears tightens; an advisory check's change is recorded only
    mid = _copy(tmp_path, "mid")
    _edit(mid, "spec/entities.yml", ENOUGH, ENOUGH.replace("min_rows: 1}", "min_rows: 1, max_rows: 5}"))
    assert _changes(old, mid) == [("order", "check_changed", "ENOUGH_ORDERS (row_expectation, advisory): max_rows (none) -> 5, "
                                   "tightened; recorded only, it never stops publication", CHECKS)]
    described = _copy(tmp_path, "described")
    _edit(described, "spec/entities.yml", ENOUGH, ENOUGH.replace("min_rows: 1}", "min_rows: 1, description: at least one}"))
    assert _changes(old, described) == [("order", "check_description_changed", "ENOUGH_ORDERS", NON_BREAKING)]


def test_sql_check_files_added_removed_and_changed(tmp_path):
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    _check_file(old, "no_negative", "block")
    _check_file(old, "gone", "keep")
    _check_file(new, "no_negative", "keep", n=-1)
    _check_file(new, "fresh", "block")
    assert _changes(old, new) == [
        ("order", "sql_check_added", "silver.order/fresh (block): the next build publishes order only if it passes: "
         "run with --data to see", CHECKS),
        ("order", "sql_check_removed", "silver.order/gone (keep): no longer keeps order", CHECKS),
        ("order", "on_failure_changed", "silver.order/no_negative: block -> keep: a failure no longer sets order back; "
         "a failure publishes order and keeps it, its readers refused until it passes: run with --data to see", CHECKS),
        ("order", "sql_check_changed", "silver.order/no_negative (keep): its query changed; a failure publishes order and "
         "keeps it, its readers refused until it passes: run with --data to see", CHECKS),
    ]
    warned = _copy(tmp_path, "warned")
    _check_file(warned, "no_negative", "warn")
    _check_file(warned, "gone", "keep")
    assert _changes(old, warned) == [("order", "on_failure_changed",
                                      "silver.order/no_negative: block -> warn: no longer stops publication of order", CHECKS)]


def test_coverage_and_checks_of_tables_assay_only_reads(tmp_path):
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", "min: 1, on_fail: flag}", "min: 2, on_fail: fail}")
    (new / "spec" / "tables.yml").write_text(
        "tables_version: 1\ntables:\n  bronze.raw_orders:\n    columns: [order_ref]\n    checks:\n"
        "      - {check_id: refs_present, kind: null_ceiling, enforcement: required, columns: [order_ref], max_null_ppm: 0}\n")
    assert _changes(old, new) == [
        ("customer", "coverage_changed", "every_customer_ordered: min 1 -> 2, on_fail flag -> fail, tightened; a failure "
         "fails the next build (dbt test, severity error): run with --data to see", CHECKS),
        ("bronze.raw_orders", "check_added", "REFS_PRESENT (null_ceiling, required): a failure in the next build stops the "
         "models that read bronze.raw_orders", CHECKS),
    ]


def test_the_cli_prints_check_changes_and_no_longer_says_no_changes(tmp_path):
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    _check_file(new, "fresh", "block")
    res = CliRunner().invoke(cli, ["plan", str(old), "--spec", str(new), "--project", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines() == [
        "CHECKS       order: sql_check_added silver.order/fresh (block): the next build publishes order only if it passes: "
        "run with --data to see",
        "replay_scope: (none)",
        "backfill_scope: (none)",
    ]
    res = CliRunner().invoke(cli, ["plan", str(old), "--spec", str(new), "--project", str(tmp_path), "--json"])
    assert json.loads(res.stdout)["changes"] == [{
        "entity": "order", "kind": "sql_check_added", "classification": "CHECKS",
        "detail": "silver.order/fresh (block): the next build publishes order only if it passes: run with --data to see"}]
