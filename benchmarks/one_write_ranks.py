"""One write with cheaper ranks: the judging query's two windows computed only where a partition repeats.

A measurement for issue 18 item 2, beside `one_write.py` (whose project, bronze, dbt build and
variants it reuses), not a product change. `one_write.py` found the staged model's judging query
alone at 1.45-1.61x a plain CTAS, its two `row_number()` windows (the delivery rank, the dedupe
rank) about 0.8-0.9x of it: each window sorts every row with every column, though in the
benchmark's bronze about 98% of the rows are alone in both partitions.

The rewrite, applied to the compiled staged SQL (`rewrite_ranks`), for each CTE of the form

    name as (select *, <expr with row_number() over (partition by P order by O)> as col from src)

adds `b.rowid as _rid` to the extraction (a handle on each bronze row; the judging query's final
select names its columns, so `_rid` never leaves it) and replaces the CTE by three:

    name__rep: the partitions with more than one row (`select P from src group by all having count(*) > 1`,
               a hash aggregate over the key columns only);
    name__win: `_rid` and the same row_number() for the rows of those partitions only (a semi-join on P,
               NULL keys matched as PARTITION BY matches them: `is not distinct from`);
    name:      src left-joined to name__win on `_rid`, the window replaced by `coalesce(rank, 1)`:
               a row alone in its partition has rank 1.

Every partition that repeats is ranked whole, with the same ORDER BY, so each row's rank is the
one the window gives (ties broken arbitrarily in both, as row_number() does; the benchmark's
orders have none). DuckDB materializes a CTE read more than once unless told otherwise, and the
rewrite reads `extracted` and `delivered` three times each, so how they are evaluated is the variant:

- R1: `extracted` and the ranked CTEs inlined (NOT MATERIALIZED), the small `__rep`/`__win`
      materialized: the key columns are recomputed from bronze per reader, and `__win`'s semi-join
      sits above the extraction's projection, so the ISO8601 parse of its ORDER BY runs twice;
- R2: DuckDB's default: `extracted` and `delivered` materialized whole (every column);
- R3: `extracted` materialized whole, the ranked CTEs inlined, `__rep`/`__win` materialized;
- R4: R3 with each `__rep` grouped on hash(P) (one integer instead of the key strings; a collision
      only adds a partition to the ranked ones, which ranks it correctly all the same).

(Tried in a prototype and left out, no faster than R1 at 1M on a loaded machine: splitting the
rows with a UNION ALL of an anti-join, rank 1, and a semi-join, ranked, instead of the left join
on `_rid`; both branches recompute the extraction.)

Timed side by side, order rotated per round, as in `one_write.py`: A (its CTAS), J0 (the judging
query as compiled, no write, every column counted), R1-R4 (the same, rewritten), E2 (one_write's
best layout) and E2R1, E2R3 (E2 with rewrite R1's or R3's judging query; `--e2` picks which).
Checked once: each rewrite's rows equal J0's (equal counts and an EXCEPT ALL against J0's rows
held in a TEMP table is empty, every column), and each E2<R>'s entity, `staged_rest` and mart
equal E2's.

    python benchmarks/one_write_ranks.py --rows 1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import re
import statistics

import duckdb

from benchproject import generated_project, workdir
from one_write import _counted, baseline_sql, dbt_once, dbt_sql, load_bronze, rounds, variants
from pipeline import SPEC

# A CTE that adds one windowed column to every row of the CTE before it (the compiled staged SQL's form).
WINDOW_CTE = re.compile(
    r"\n(?P<name>\w+) as \(\n    select \*, (?P<expr>.*?row_number\(\) over \(partition by (?P<p>.*?)"
    r" order by (?P<o>[^)]*)\).*?) as (?P<col>\w+)\n    from (?P<src>\w+)\n\)"
)
# The extraction's read of bronze, where `_rid` is added.
FROM_BRONZE = re.compile(r"\n    from (\S+) as b\n\)")
# How each rewrite evaluates the CTEs: (extracted, the ranked CTEs, __rep/__win; "" = DuckDB's default), hash keys.
REWRITES = {
    "R1": (" not materialized", " not materialized", " materialized", False),
    "R2": ("", "", "", False),
    "R3": (" materialized", " not materialized", " materialized", False),
    "R4": (" materialized", " not materialized", " materialized", True),
}


def _split_top(expr: str) -> list[str]:
    """`expr`'s comma-separated items outside parentheses (a PARTITION BY list)."""
    items, depth, cur = [], 0, ""
    for ch in expr:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return items + [cur.strip()]


def rewrite_ranks(judged: str, variant: str) -> str:
    """The compiled judging query with each window computed only for partitions of more than one
    row (the module docstring's rewrite), its CTEs evaluated as REWRITES[variant] says."""
    extracted, ranked, small, hashed = REWRITES[variant]
    assert len(FROM_BRONZE.findall(judged)) == 1, "the extraction's read of bronze is not where expected"
    sql = FROM_BRONZE.sub(lambda m: f",\n        b.rowid as _rid\n    from {m.group(1)} as b\n)", judged)

    def one(m: re.Match) -> str:
        name, expr, part, order, col, src = (m.group(k) for k in ("name", "expr", "p", "o", "col", "src"))
        window = f"row_number() over (partition by {part} order by {order})"
        assert window in expr, name
        if hashed:
            keys, on = f"hash({part}) as _h", f"hash({part}) = r._h"
        else:
            items = _split_top(part)
            keys = ", ".join(f"{k} as _k{i}" for i, k in enumerate(items))
            # PARTITION BY puts NULL keys together; so does GROUP BY; the join must match them too.
            on = " and ".join(f"({k}) is not distinct from r._k{i}" for i, k in enumerate(items))
        return (
            f"\n{name}__rep as{small} (\n    select {keys} from {src} group by all having count(*) > 1\n),\n\n"
            f"{name}__win as{small} (\n    select _rid, {window} as _rank\n"
            f"    from {src} as s semi join {name}__rep as r on {on}\n),\n\n"
            f"{name} as{ranked} (\n    select s.*, {expr.replace(window, 'coalesce(w._rank, 1)')} as {col}\n"
            f"    from {src} as s left join {name}__win as w using (_rid)\n)"
        )

    sql, n = WINDOW_CTE.subn(one, sql)
    assert n == 2, f"expected the delivery and dedupe windows, found {n}"
    sql, n = re.subn(r"\bextracted as \(", f"extracted as{extracted} (", sql)
    assert n == 1
    return sql


def plan(sql: dict[str, str], con: duckdb.DuckDBPyConnection, layouts: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Each variant's statements, (label, SQL): A, J0, the rewrites, E2, and E2<R> for each rewrite R in `layouts`."""
    out = {"A": [("CTAS", "create table a.baseline as " + baseline_sql())],
           "J0": [("judging query, no write", _counted(con, sql["judged"]))]}
    for v in REWRITES:
        out[v] = [("judging query rewritten, no write", _counted(con, rewrite_ranks(sql["judged"], v)))]
    out["E2"] = variants(sql, con)["E2"]
    assert sum(sql["judged"] in s for _, s in out["E2"]) == 1
    for v in layouts:
        # E2's statements with the judging query rewritten (only the TEMP table's statement holds
        # it) and schema e2 / TEMP table e2_judged renamed.
        fast, s2 = rewrite_ranks(sql["judged"], v), f"e2{v.lower()}"
        rename = lambda s: re.sub(r"\be2_judged\b", f"{s2}_judged", re.sub(r"\be2\.", f"{s2}.", s))  # noqa: E731
        out[s2.upper()] = [(label, rename(s.replace(sql["judged"], fast))) for label, s in out["E2"]]
    return out


def check_rewrites(con: duckdb.DuckDBPyConnection, judged: str) -> list[str]:
    """Each rewrite's rows equal the compiled query's, every column: equal counts and an empty
    EXCEPT ALL against the compiled query's rows held in a TEMP table (equal sizes, so equal multisets)."""
    con.execute(f"create or replace temp table check_j0 as {judged}")
    n0 = con.execute("select count(*) from check_j0").fetchone()[0]
    notes = []
    for v in REWRITES:
        q = rewrite_ranks(judged, v)
        n, extra = con.execute(f"select (select count(*) from ({q})), (select count(*) from (select * from ({q}) except all select * from check_j0))").fetchone()
        assert n == n0 and extra == 0, (v, n, n0, extra)
        notes.append(f"{v}: {n:,} rows = J0's, row for row (every column)")
    con.execute("drop table check_j0")
    return notes


def check_e2r(con: duckdb.DuckDBPyConnection, schema: str) -> str:
    """E2<R>'s entity, staged_rest and mart equal E2's (run after the first round, tables kept)."""
    for t in ("entity", "staged_rest", "mart"):
        a, b = (con.execute(f"select count(*) from {s}.{t}").fetchone()[0] for s in ("e2", schema))
        extra = con.execute(f"select count(*) from (select * from {schema}.{t} except all select * from e2.{t})").fetchone()[0]
        assert a == b and extra == 0, (t, a, b, extra)
    return f"{schema.upper()}: entity, staged_rest and mart = E2's, row for row"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--e2", nargs="+", default=["R1", "R3"], choices=sorted(REWRITES), help="the rewrites timed in E2's layout")
    ap.add_argument("--keep", help="keep the benchmark project in this directory")
    args = ap.parse_args()
    with workdir(args.keep, "assay-onewrite-ranks-") as work:
        db = generated_project(work, SPEC)
        load_bronze(db, args.rows)
        dbt_once(work)
        sql = dbt_sql(work)
        con = duckdb.connect(str(db))
        notes = check_rewrites(con, sql["judged"])
        steps = plan(sql, con, args.e2)
        order = list(steps)
        times, peaks, checked = rounds(con, order, steps, args.repeat,
                                       lambda: [check_e2r(con, f"e2{v.lower()}") for v in args.e2])
        notes += checked
        con.close()

    base = [t[0] for t in times["A"]]
    j0 = [t[0] for t in times["J0"]]
    print(f"rows: {args.rows:,}; repeats: {args.repeat}; medians; ratios = median over rounds of total / A's (and / J0's)")
    for v in order:
        totals = [sum(t) for t in times[v]]
        ratio = statistics.median(t / b for t, b in zip(totals, base))
        vs_j0 = f", {statistics.median(t / b for t, b in zip(totals, j0)):.2f}x J0" if v in REWRITES else ""
        print(f"{v}: total {statistics.median(totals):.2f} s, {ratio:.2f}x A{vs_j0}; peak RSS {max(peaks[v]):.2f} GB")
        if len(steps[v]) > 1:
            for i, (label, _) in enumerate(steps[v]):
                col = [t[i] for t in times[v]]
                print(f"  {label:38s} {statistics.median(col):7.2f} s  (rounds: {', '.join(f'{c:.2f}' for c in col)})")
        else:
            print(f"  rounds: {', '.join(f'{sum(t):.2f}' for t in times[v])}")
    for n in notes:
        print("check " + n)


if __name__ == "__main__":
    main()
