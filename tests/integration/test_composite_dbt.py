"""Composite keys and foreign keys, dedupe ordered by mapped columns, instants, arithmetic and a
CASE expression rule: the same hand-checked outcome on DuckDB and Postgres."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "composite"
M = ["_load_id", "_ingested_at", "_source_row_id"]
T = "2026-03-01T10:00:00Z"
BRONZE = [
    Relation("raw_accounts", M + ["t", "n", "opened", "s"], [
        ["l1", T, "a1", "ACME", "1", "2020-01-01T00:00:00Z", "open"],
        ["l1", T, "a2", "acme", "2", "1999-01-01T00:00:00+01:00", "open"],  # before 2000 in UTC: flag
        ["l1", T, "a3", "x", "3", "2020-01-01T00:00:00Z", "open"],  # tenant too short
        ["l1", T, "a4", "beta", "1", "2020-01-01T00:00:00", "open"],  # an instant needs a zone
        ["l1", T, "a5", "beta", "2", "2020-01-01T00:00:00Z", "bad\u0007"],  # control character
    ]),
    Relation("raw_txns", M + ["id", "t", "n", "at", "seq", "amt", "kind", "settled", "local", "attrs"], [
        ["l1", T, "x1", "T1", "ACME", "1", "2026-02-01T10:00:00Z", "1", "1234 EUR", "1", "yes", None, None],
        ["l1", T, "x2", "T1", "ACME", "1", "2026-02-01T10:00:00Z", "2", "999 EUR", "1", "no", "2026-02-01 12:00:00", '{"a": 1}'],
        ["l1", T, "x3", "T2", "acme", "3", "2026-02-01T10:00:00Z", "1", "-50", "3", "true", None, None],  # parent quarantined
        ["l1", T, "x4", "T3", "ACME", "2", "2026-02-02T10:00:00Z", "1", "-50", "3", "false", None, None],  # CASE rule: flag
        ["l1", T, "x5", "T4", "ACME", "2", "2026-02-02T10:00:00Z", "1", "10", "7", "true", None, None],  # kind not in set
        ["l1", T, "x6", "T5", None, None, "2026-02-02T10:00:00Z", "1", "10", "1", None, None, None],  # NULL fk: no orphan
        ["l1", T, "x7", "T6", "ACME", "1", "2026-02-02T10:00:00+02:00", "1", "10", "1", "1", None, None],
    ]),
]


class Composite:
    def test_accounts(self, built):
        kept = built.query('select tenant, account_no, _quality_flags from silver."account" order by 1, 2')
        assert [(r[0], r[1], list(r[2])) for r in kept] == [("acme", 1, []), ("acme", 2, ["opened_at_range_min"])]
        rej = built.query('select _source_row_id, failed_rules from silver."account__reject" order by 1')
        assert [(r[0], list(r[1])) for r in rej] == [("a3", ["tenant_length"]), ("a4", ["opened_at_coercible"]), ("a5", ["status_charset"])]

    def test_transactions(self, built):
        routes = dict(built.query('select _source_row_id, _route from silver."txn__staged"'))
        assert routes == {"x1": "deduped", "x2": "kept", "x3": "quarantined", "x4": "kept", "x5": "quarantined", "x6": "kept", "x7": "kept"}
        rows = {r[0]: r[1:] for r in built.query(
            'select _source_row_id, amount, settled, booked_at, local_ts, _quality_flags from silver."txn"')}
        assert rows["x2"][0] == Decimal("9.99") and rows["x2"][1] is False
        assert str(rows["x2"][3]) == "2026-02-01 10:00:00"  # Helsinki local noon, UTC+2 in February
        assert str(rows["x7"][2]) == "2026-02-02 08:00:00"
        assert list(rows["x4"][4]) == ["sane_amount"] and rows["x4"][0] == Decimal("-0.5")
        rej = dict((r[0], list(r[1])) for r in built.query('select _source_row_id, failed_rules from silver."txn__reject"'))
        assert rej == {"x3": ["txn_of_account_referential"], "x5": ["kind_in_set"]}


class TestCompositeDuckDB(Composite):
    @pytest.fixture(scope="class")
    @classmethod
    def built(cls, tmp_path_factory):
        p = make_project(tmp_path_factory.mktemp("composite"), SPEC)
        p.load_bronze(BRONZE)
        p.dbt("build", check=True)
        return p


@pytest.mark.postgres
class TestCompositePostgres(Composite):
    @pytest.fixture(scope="class")
    @classmethod
    def built(cls, tmp_path_factory, postgres_database):
        p = make_project(tmp_path_factory.mktemp("composite_pg"), SPEC, engine="postgres", pg=postgres_database("composite"))
        p.load_bronze(BRONZE)
        p.dbt("build", check=True)
        return p
