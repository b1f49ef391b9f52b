"""`materialized: incremental` and its `incremental:` block: what is accepted, what is refused and how.

Each case edits the valid spec of tests/fixtures/specs/incremental and compares the whole list of
diagnostics, so a refusal is also proven to be reported once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.ir.resolve import compile_spec

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "incremental"


def edited(tmp_path: Path, file: str, old: str, new: str) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(SPEC, root)
    path = root / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return root


def diagnostics(root: Path) -> list[tuple]:
    project, diags, _loaded = compile_spec(root)
    assert project is None
    return [(d.file, d.line, d.code, d.message) for d in diags]


def test_the_fixture_is_valid_and_carries_the_lag():
    project, diags, _ = compile_spec(SPEC)
    assert diags == []
    orders, customers = project.entity("orders"), project.entity("customers")
    assert (orders.materialized, orders.incremental_lag) == ("incremental", "2h")
    assert (customers.materialized, customers.incremental_lag) == ("table", None)


def test_the_lag_is_optional(tmp_path):
    project, diags, _ = compile_spec(edited(tmp_path, "entities.yaml", "    incremental: {lag: 2h}\n", ""))
    assert diags == [] and project.entity("orders").incremental_lag is None



def test_a_zero_lag_is_the_default_written_out(tmp_path):
    """`lag: 0h` was refused as "not a duration" (an outside tester, session 44)."""
    from assay.targets.dbt.incremental import lag_hours

    project, diags, _ = compile_spec(edited(tmp_path, "entities.yaml", "{lag: 2h}", "{lag: 0h}"))
    assert diags == [] and project.entity("orders").incremental_lag == "0h"
    assert lag_hours(project.entity("orders")) == 0


CASES = {
    "block_without_materialized_incremental": (
        ("entities.yaml", "    materialized: incremental\n", ""),
        [("entities.yaml", 6, "SPEC_INVALID",
          "entity `orders` declares `incremental:` but is not incremental; add `materialized: incremental` to "
          "build it from new deliveries only, or remove the `incremental:` block.")],
    ),
    "lag_not_a_duration": (
        ("entities.yaml", "{lag: 2h}", "{lag: 2 hours}"),
        [("entities.yaml", 7, "SPEC_GRAMMAR",
          "entities.orders.incremental.lag is `2 hours`, not a duration; write hours, days or weeks such as "
          "`6h`, `90d`, `2w`.")],
    ),
    "lag_in_minutes": (
        ("entities.yaml", "{lag: 2h}", "{lag: 90m}"),
        [("entities.yaml", 7, "SPEC_GRAMMAR",
          "entities.orders.incremental.lag is `90m`, not a duration; write hours, days or weeks such as "
          "`6h`, `90d`, `2w`.")],
    ),
    "block_without_lag": (
        ("entities.yaml", "{lag: 2h}", "{}"),
        [("entities.yaml", 7, "SPEC_GRAMMAR", "entities.orders.incremental has no `lag`; write `lag:` there, it is required.")],
    ),
    "unknown_key_in_block": (
        ("entities.yaml", "{lag: 2h}", "{lag: 2h, watermark: _ingested_at}"),
        [("entities.yaml", 7, "SPEC_GRAMMAR",
          "`watermark` is not a key of entities.orders.incremental. Accepted keys: `lag`.")],
    ),
    "type2": (
        ("entities.yaml", "    key: [order_id]\n", "    key: [order_id]\n    scd: type2\n"),
        [("entities.yaml", 7, "SPEC_INVALID",
          "entity `orders` is `scd: type2` and `materialized: incremental`; a type-2 entity is versioned by a dbt "
          "snapshot, which already keeps what earlier builds saw. Remove `materialized: incremental`.")],
    ),
    "no_retention": (
        ("entities.yaml", "      name: {type: string}\n    quarantine: {retention: 30d}\n",
         "      name: {type: string}\n    materialized: incremental\n"),
        [("entities.yaml", 25, "SPEC_INVALID",
          "entity `customers` is `materialized: incremental`, which sends rows arriving older than its window to "
          "the reject table with their raw payload, and it has no `quarantine.retention`; add "
          "`quarantine: {retention: 90d}` to the entity (hours, days or weeks: `6h`, `90d`, `2w`).")],
    ),
    "unique_rule": (
        ("mapping_orders.yaml", "      - {rule: in_set, values: [new, paid, shipped], on_fail: quarantine}\n",
         "      - {rule: in_set, values: [new, paid, shipped], on_fail: quarantine}\n      - {rule: unique, on_fail: flag}\n"),
        [("mapping_orders.yaml", 13, "SPEC_INVALID",
          "rule `unique` on `status` of `orders` compares a row with the winners of every other key, and an "
          "incremental build re-reads only the keys it received; make `orders` `materialized: table`, or remove "
          "the rule.")],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_refusal(tmp_path, name):
    (file, old, new), expect = CASES[name]
    assert diagnostics(edited(tmp_path, file, old, new)) == expect


def test_keep_sql_checks_stay_refused(tmp_path):
    root = edited(tmp_path, "entities.yaml", "spec_version: 1\n", "spec_version: 1\n")
    check = root / "checks" / "silver" / "orders" / "negative.sql"
    check.parent.mkdir(parents=True)
    check.write_text("/* assay\non_failure: keep\n*/\nSELECT * FROM silver.orders WHERE amount < 0\n")
    [(file, line, code, message)] = diagnostics(root)
    assert (file, line, code) == ("checks/silver/orders/negative.sql", 2, "SQL_CHECK_INVALID")
    assert "is an incremental model" in message
