"""Declared checks: all of a table's checks as one query against one query per check, and their
cost as a ratio of the table's build, on DuckDB and PostgreSQL, side by side in one run.

Targets (DESIGN.md section 6): all declared checks of a table at most 0.25x the table's build on
DuckDB; on PostgreSQL one query for all declared checks at least 3x faster than one query per check.

    python benchmarks/checks.py                      # 1M rows
    python benchmarks/checks.py --rows 1000000 10000000

The measuring queries are the generator's own (`assay.targets.dbt.declared_checks.declared_query`)
for the five checks of benchmarks/specs/checks (key uniqueness over (station, observed_at), null
ceiling, value range, continuity, row count), rendered for each engine the way the package
renders them (`candidate` and `assay.continuity_gap`). "One query per check" is the same
generator run on the entity with that one check. "The table's build" is a `CREATE TABLE AS` of the
typed table from its text bronze with plain casts, the work the candidate's build does.

A second table measures the same five checks with the key_uniqueness check over the entity key
(reading_id) instead: "full" is the query a table without a key audit runs, "proven" the one the
`assay_entity` materialization runs once the entity's key audit has passed on the candidate
(decision 1010: only rows with a NULL key part are grouped). "key audit" is that audit's own
query, which the build runs anyway (it is part of the entity's build, not of its checks). Times are
wall clock of the engine's statement from Python, best of --repeat; PostgreSQL is the embedded
server of tests/support/pg.py (default settings, no ANALYZE, as the candidate is checked).
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import jinja2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support/pg.py starts the embedded PostgreSQL

from assay.api import load_project  # noqa: E402
from assay.targets.dbt.declared_checks import declared_query  # noqa: E402

SPEC = Path(__file__).parent / "specs" / "checks"

# One row per station and minute (1000 stations), about 1% null temperatures, a humidity that
# stays in range, and no gap: every check passes, so every check reads everything it would.
RAW = {
    "duckdb": """
        create or replace table raw_readings as
        select 'r' || i::varchar as id, 'S' || (i % 1000)::varchar as station,
               strftime(timestamp '2026-01-01' + to_minutes(i // 1000), '%Y-%m-%d %H:%M:%S') as at_text,
               ((i % 1000) / 10)::varchar as rh,
               case when i % 97 = 0 then null else ((i % 400) / 10 - 10)::varchar end as temp,
               i::varchar as seq
        from range({rows}) as t(i)""",
    "postgres": """
        drop table if exists raw_readings;
        create table raw_readings as
        select 'r' || i as id, 'S' || (i % 1000) as station,
               to_char(timestamp '2026-01-01' + (i / 1000) * interval '1 minute', 'YYYY-MM-DD HH24:MI:SS') as at_text,
               ((i % 1000) / 10.0)::text as rh,
               case when i % 97 = 0 then null else ((i % 400) / 10.0 - 10)::text end as temp,
               i::text as seq
        from generate_series(0, {rows} - 1) as t(i)""",
}
BUILD = """
    create table reading as
    select cast(id as varchar(64)) as reading_id, cast(station as varchar(64)) as station,
           cast(at_text as timestamp) as observed_at, cast(rh as decimal(5,1)) as humidity,
           cast(temp as decimal(5,1)) as temp_c, cast(seq as bigint) as seq
    from raw_readings"""
GAP = {
    "duckdb": lambda lo, hi, domain: f"(epoch_us({hi}) - epoch_us({lo}))",
    "postgres": lambda lo, hi, domain: f"cast(extract(epoch from ({hi} - {lo})) * 1000000 as bigint)",
}


TYPES = {
    "duckdb": {"string": "VARCHAR", "int": "BIGINT", "timestamp": "TIMESTAMP", "decimal": "DECIMAL"},
    "postgres": {"string": "text", "int": "bigint", "timestamp": "timestamp", "decimal": "numeric"},
}


class _Assay:
    """What the measuring query calls of the package, per engine (continuity_gap.sql, sql_type.sql)."""

    def __init__(self, engine: str) -> None:
        self.continuity_gap = GAP[engine]
        self._types = TYPES[engine]

    def sql_type(self, assay_type: str) -> str:
        if assay_type.startswith("decimal"):
            return self._types["decimal"] + assay_type[len("decimal"):]
        return self._types[assay_type]


def render(sql: str, engine: str) -> str:
    return jinja2.Environment().from_string(sql).render(candidate="reading", assay=_Assay(engine))


class Engine:
    """An engine under measurement. `duckdb` is an in-memory database; `duckdb-file` a database
    file, as every assay project's warehouse is (its build writes the table to disk, where the
    in-memory build only fills memory); `postgres` the embedded server."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dialect = "duckdb" if name.startswith("duckdb") else name
        self.server = None
        self._dir = None
        if name == "duckdb":
            self.con = duckdb.connect(":memory:")
        elif name == "duckdb-file":
            self._dir = tempfile.mkdtemp(prefix="assay-checks-bench-")
            self.con = duckdb.connect(str(Path(self._dir) / "bench.duckdb"))
        else:
            from tests.support import pg

            self._servers = pg.postgres_server("embedded")
            self.server = next(self._servers)
            self.con = self.server.connect()
            self.con.autocommit = True

    def run(self, sql: str) -> float:
        started = time.perf_counter()
        if self.dialect == "duckdb":
            self.con.execute(sql).fetchall()
        else:
            with self.con.cursor() as cur:
                cur.execute(sql)
                if cur.description is not None:
                    cur.fetchall()
        return time.perf_counter() - started

    def close(self) -> None:
        self.con.close()
        if self.server is not None:
            self._servers.close()
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


def best(engine: Engine, sql: str, repeat: int, before: str = "") -> float:
    times = []
    for _ in range(repeat):
        if before:
            engine.run(before)
        times.append(engine.run(sql))
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, nargs="+", default=[1_000_000])
    ap.add_argument("--engines", nargs="+", default=["duckdb", "duckdb-file", "postgres"],
                    choices=["duckdb", "duckdb-file", "postgres"])
    ap.add_argument("--repeat", type=int, default=2, help="best of this many runs of each statement")
    args = ap.parse_args()
    entity = load_project(SPEC).entity("reading")
    one_sql, _ = declared_query(entity)
    per_check = [(c.check_id, declared_query(dataclasses.replace(entity, declared_checks=(c,)))[0])
                 for c in entity.declared_checks]
    # The same checks with key_uniqueness over the entity key, which the key audit proves.
    keyed = dataclasses.replace(entity, declared_checks=tuple(
        dataclasses.replace(c, columns=entity.key) if c.kind == "key_uniqueness" else c for c in entity.declared_checks))
    keyed_full, keyed_proven = declared_query(keyed)[0], declared_query(keyed, key_proven=True)[0]
    # One query per check the way a tool without the key audit runs them: the key counted in full.
    keyed_each = [declared_query(dataclasses.replace(keyed, declared_checks=(c,)))[0] for c in keyed.declared_checks]
    key_audit = (f"select count(*) from (select {', '.join(entity.key)} from reading where "
                 + " and ".join(f"{k} is not null" for k in entity.key)
                 + f" group by {', '.join(entity.key)} having count(*) > 1) as assay_audit")
    print(f"{len(per_check)} declared checks: " + ", ".join(i for i, _ in per_check))
    header = f"{'engine':<12}{'rows':>12}{'build s':>10}{'one query s':>13}{'per check s':>13}{'per check/one':>15}{'checks/build':>14}"
    lines, keyed_lines = [], []
    for name in args.engines:
        engine = Engine(name)
        try:
            for rows in args.rows:
                engine.run(RAW[engine.dialect].format(rows=rows))
                drop = "drop table if exists reading"
                build = best(engine, BUILD, args.repeat, before=drop)
                one = best(engine, render(one_sql, engine.dialect), args.repeat)
                each = {cid: best(engine, render(sql, engine.dialect), args.repeat) for cid, sql in per_check}
                separate = sum(each.values())
                line = (f"{name:<12}{rows:>12,}{build:>10.2f}{one:>13.2f}{separate:>13.2f}"
                        f"{separate / one:>14.2f}x{one / build:>13.2f}x")
                lines.append(line)
                print(header if len(lines) == 1 else "", end="\n" if len(lines) == 1 else "")
                print(line, "  (" + ", ".join(f"{cid} {secs:.2f}" for cid, secs in each.items()) + ")", flush=True)
                full = best(engine, render(keyed_full, engine.dialect), args.repeat)
                proven = best(engine, render(keyed_proven, engine.dialect), args.repeat)
                audit = best(engine, key_audit, args.repeat)
                naive = sum(best(engine, render(sql, engine.dialect), args.repeat) for sql in keyed_each)
                keyed_lines.append(f"{name:<12}{rows:>12,}{build:>10.2f}{audit:>12.2f}{full:>9.2f}{proven:>9.2f}{naive:>12.2f}"
                                   f"{full / build:>13.2f}x{proven / build:>14.2f}x{naive / proven:>16.2f}x")
        finally:
            engine.close()
    print()
    print("with key_uniqueness over the entity key (reading_id), one query, full count vs. after the key audit:")
    print(f"{'engine':<12}{'rows':>12}{'build s':>10}{'key audit s':>12}{'full s':>9}{'proven s':>9}{'per check s':>12}"
          f"{'full/build':>14}{'proven/build':>15}{'per check/proven':>17}")
    for line in keyed_lines:
        print(line)
    print()
    print("targets: checks/build <= 0.25x on DuckDB; per check/one >= 3x on PostgreSQL")


if __name__ == "__main__":
    main()
