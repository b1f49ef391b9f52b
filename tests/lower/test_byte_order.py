"""The dedupe and delivery orders compare text byte by byte, whatever the database's collation
(decision 0984).

An outside tester (session 36): on a PostgreSQL database created with an ICU `en-US` collation the
same bronze rows kept other winners than on DuckDB: `_load_id` 'B' beat 'a' and `_source_row_id`
'Z1' beat 'a1' (en-US puts 'a' before 'B'; bytes put 'B' first), and `explain` said so. The suite's
own clusters are created with `--locale=C`, which hid it. The lowered ranks are run here as each
target spells them (the dbt package rendered, the SQLMesh macros expanded) on DuckDB and on
PostgreSQL, in a database whose collation is ICU `en-US` where the server has ICU (Debian's
PostgreSQL 15; the embedded PostgreSQL 18 is built without it and runs the ranks in its C database).
"""

from __future__ import annotations

import duckdb
import pytest

from assay.api import load_project
from assay.lower.staged import dedupe_rank, delivery_number
from tests.lower.target_sql import TARGETS, spelled

PG15 = "the collation a database is created with is the server's to offer: Debian's PostgreSQL 15 has ICU"

ENTITIES = """\
spec_version: 1
entities:
  item:
    grain: one row per item, latest delivery wins
    key: [k]
    fields:
      k: {type: string}
      tb: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [tb]}
"""
MAPPING = """\
mapping_version: 1
source: raw_items
target: item
key: {k: {from: "$.k"}}
fields: {tb: {from: "$.tb"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
T = "2026-03-01 08:00:00"
# (k, tb, _source_row_id, _load_id): one instant for all, so text decides every tie
ROWS = [
    ("K1", "a", "r1", "l1"), ("K1", "B", "r2", "l1"),  # the tie_break decides: 'a' > 'B' by bytes
    ("K2", "x", "a1", "l1"), ("K2", "x", "Z1", "l1"),  # then the source row id: 'a1' > 'Z1'
    ("K3", "x", "s1", "a"), ("K3", "x", "s1", "B"),  # one source row delivered twice: load 'a' is the latest
]
# byte order: (k, source row, load) of each key's winner
WINNERS = [("K1", "r1", "l1"), ("K2", "a1", "l1"), ("K3", "s1", "a")]


def _query(tmp_path, sp, engine: str) -> str:
    (tmp_path / "entities.yml").write_text(ENTITIES)
    (tmp_path / "items.yml").write_text(MAPPING)
    entity = load_project(tmp_path).entity("item")
    text = "varchar" if engine == "duckdb" else "text"
    values = ", ".join(f"('m', '{k}', '{tb}', '{s}', '{ld}', timestamp '{T}')" for k, tb, s, ld in ROWS)
    ranked = (f"select *, {delivery_number(sp)} as _delivery_rank from (values {values}) "
              f"as t(_mapping, k, tb, _source_row_id, _load_id, _ingested_at)")
    return (f"select k, _source_row_id, _load_id from (select *, {dedupe_rank(sp, entity)} as _dedupe_rank from ({ranked}) as d) "
            f"as r where _dedupe_rank = 1 order by k").replace("'m'", f"cast('m' as {text})")


SPELLINGS = {target: (lambda tmp_path, engine, target=target: spelled(target, engine, lambda sp: _query(tmp_path, sp, engine)))
             for target in TARGETS}


@pytest.mark.parametrize("target", list(SPELLINGS))
def test_the_winners_are_the_byte_orders_on_duckdb(tmp_path, target):
    assert duckdb.connect().execute(SPELLINGS[target](tmp_path, "duckdb")).fetchall() == WINNERS


@pytest.mark.postgres
@pytest.mark.parametrize("target", list(SPELLINGS))
def test_the_winners_are_the_byte_orders_under_a_linguistic_collation(tmp_path, postgres_server, target):
    admin = postgres_server.connect()
    admin.autocommit = True
    name = f"assay_icu_{target}"
    cur = admin.cursor()
    cur.execute(f"drop database if exists {name}")
    try:
        cur.execute(f"create database {name} template template0 encoding 'UTF8' locale_provider icu icu_locale 'en-US'")
    except Exception as exc:  # noqa: BLE001 - a server without ICU: its own database, byte order already
        if "ICU is not supported" not in str(exc):
            raise
        name = None
    conn = postgres_server.connect(name) if name else postgres_server.connect()
    try:
        run = conn.cursor()
        if name:
            run.execute("select 'a' < 'B'")
            assert run.fetchone() == (True,), "the database's collation is not en-US: the test would prove nothing"
        run.execute(SPELLINGS[target](tmp_path, "postgres"))
        assert run.fetchall() == WINNERS
    finally:
        conn.close()
        if name:
            cur.execute(f"drop database if exists {name}")
        admin.close()
