"""One write: would the entity pipeline reach 1.6x a CTAS if the entity were its only full write?

A measurement for issue 18 item 2, not a product change. It generates the pipeline project
(pipeline.py's spec and bronze), builds it once with dbt to get the SQL dbt really runs (the
staged model, entity, reject, mart and ingestion test from target/compiled; the entity's
conservation audit and reject resolution from dbt's log), then times those statements directly
on the same DuckDB file (python duckdb, one connection, default threads), variant by variant,
side by side, `--repeat` times, the order of the variants rotated each round:

- A: the baseline CTAS (pipeline.py's BASELINE) over clean bronze;
- B: today: staged CTAS (every row), reject, entity candidate CTAS of the kept rows, the
  conservation audit, the reject resolution, the mart's counts, the ingestion test;
- C: one write, judged twice: the staged query's non-kept rows into `staged_rest` and its kept
  rows (entity columns) into the entity, each a CTAS over the whole judging query; every reader
  of the staged relation reads the entity's rows beside `staged_rest`;
- D: one write, judged once into a TEMP table, entity and `staged_rest` copied from it;
- E1/E2: C/D with the ingestion test folded into the entity's audits: the metadata checks read
  the entity and `staged_rest` (lineage columns, delivery ranks) instead of re-reading bronze.

Probes (P, W; no total) split the cost: each query evaluated without writing (every column
counted, so nothing is pruned), the judging query cut after its extraction and after its windows
(and its extraction with the ISO8601 parse as a plain cast, starred: not the product's
semantics); and the write alone: the kept rows copied from a TEMP table, with the baseline's
columns and with the entity's.

    python benchmarks/one_write.py --rows 1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import duckdb

from benchproject import build_times, generated_project, workdir
from pipeline import BASELINE, BASELINE_SOURCE, BRONZE, SPEC

# The relations as dbt's compiled SQL names them.
STAGED = '"bench"."silver"."sale__staged"'
CANDIDATE = '"bench"."silver"."sale__assay_candidate"'
REJECT = '"bench"."silver"."sale__reject"'
MODELS = Path("target/compiled/bench/models/assay")
# The baseline's output columns, which the entity also has (it adds _mapping, _quality_flags, _quality_ok).
BASELINE_COLUMNS = "sale_id, store, sku, quantity, unit_price, discount, sold_at, channel, email, _load_id, _ingested_at, _source_row_id"
# The ISO8601 parse of the judging query (regex match, then a native cast with the offset applied).
ISO8601 = re.compile(r"CASE WHEN regexp_full_match\((.*?), '\(\(\?:.*?END END", re.S)
PROBES = ("P", "W")  # variants that split the cost; no total, no ratio


def _hwm_reset() -> None:
    """Reset this process's peak resident set (Linux: clear_refs 5), so VmHWM is per variant."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def _hwm_gb() -> float:
    """This process's peak resident set since the last reset, GB (0 where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e6
    except OSError:
        pass
    return 0.0


def load_bronze(db: Path, rows: int) -> None:
    """Raw bronze as pipeline.py loads it, and the clean copy its baseline reads (the same statement
    as pipeline.py's main: the two unparseable values made castable)."""
    con = duckdb.connect(str(db))
    con.execute("create schema if not exists bronze")
    con.execute(BRONZE.format(rows=rows))
    con.execute(
        "create or replace table bronze.clean_sales as select * replace ("
        "case when qty = 'x' then '1' else qty end as qty, "
        "case when price = '12,50' then '12.50' else price end as price) from bronze.raw_sales"
    )
    con.close()


def dbt_once(work: Path) -> dict[str, float]:
    """One `dbt build` of the project with pipeline.py's baseline model beside it: dbt's own node
    times (a reference for this run) and the compiled SQL and log this script reads."""
    bench = work / "models" / "bench"
    bench.mkdir(parents=True, exist_ok=True)
    (bench / "_baseline.yml").write_text(BASELINE_SOURCE.replace("name: bronze", "name: bench_bronze"))
    (bench / "baseline_ctas.sql").write_text(BASELINE.replace("source('bronze'", "source('bench_bronze'"))
    return build_times(work, "--full-refresh")


def _logged(work: Path, node: str, starts: str) -> str:
    """The statement dbt's log shows node `node` running that starts with `starts`."""
    log = (work / "logs" / "dbt.log").read_text()
    pattern = re.compile(r"On " + re.escape(node) + r": /\* \{.*?\} \*/\n(.*?)\n\d\d:\d\d:\d\d\.\d+ \[", re.S)
    found = [m.group(1) for m in pattern.finditer(log) if m.group(1).lstrip().startswith(starts)]
    if not found:
        raise SystemExit(f"no statement of {node} starting {starts!r} in dbt.log")
    return found[-1]


def dbt_sql(work: Path) -> dict[str, str]:
    """The SQL of the pipeline's nodes as dbt ran it."""
    read = lambda p: (work / MODELS / p).read_text()  # noqa: E731
    return {
        "judged": read("sale/sale__staged.sql"),
        "entity": read("sale/sale.sql"),
        "reject": read("sale/sale__reject.sql"),
        "mart": read("mart_data_quality.sql"),
        "ingestion": read("sources.yml/assay_ingestion_metadata__raw_sales.sql"),
        "conservation": _logged(work, "model.bench.sale", "select count(*) as n from ("),
        "resolve": _logged(work, "model.bench.sale", 'update "bench"."silver"."sale__reject"'),
    }


def baseline_sql() -> str:
    """pipeline.py's baseline model as plain SQL over clean bronze."""
    body = BASELINE.split("}}", 1)[1]
    return body.replace("{{ source('bronze', 'clean_sales') }}", "bronze.clean_sales")


def _union(entity: str, rest: str) -> str:
    """The staged relation as readers see it in the one-write design: the entity's rows (all kept,
    so first delivery and first by key) beside the rows it does not keep."""
    return (
        "(select _mapping, _source_row_id, _load_id, _ingested_at, 1 as _delivery_rank, 1 as _dedupe_rank,"
        f" 'kept' as _route, _quality_flags as _failed_rules from {entity}"
        " union all select _mapping, _source_row_id, _load_id, _ingested_at, _delivery_rank, _dedupe_rank,"
        f" _route, _failed_rules from {rest})"
    )


def folded_ingestion(entity: str, rest: str) -> str:
    """The ingestion-metadata test from the judged rows instead of bronze (variant E).

    Missing or unparseable metadata: a NULL among the three lineage columns as the judging query
    cast them (a NULL `_ingested_at` there is missing or unparseable alike). A `_source_row_id`
    twice in one load: two deliveries of one source row, so one of them has a delivery rank > 1
    and sits among the rows not kept; only those source rows are grouped."""
    u = _union(entity, rest)
    return f"""
with u as {u},
superseded as (select distinct _mapping, _source_row_id from {rest} where _delivery_rank > 1)
select 'missing_or_unparseable' as failure, _source_row_id from u
where _load_id is null or _ingested_at is null or _source_row_id is null
union all
select 'duplicate_source_row_id' as failure, _source_row_id from u
join superseded using (_mapping, _source_row_id)
where _load_id is not null
group by _mapping, _load_id, _source_row_id
having count(*) > 1
"""


def _counted(con: duckdb.DuckDBPyConnection, sql: str) -> str:
    """`sql` evaluated without writing: every column counted, so none is pruned away."""
    cols = [d[0] for d in con.execute(f"select * from ({sql}) limit 0").description]
    return "select count(*), " + ", ".join(f'count("{c}")' for c in cols) + f" from ({sql})"


def _plain_timestamps(sql: str) -> str:
    """`sql` with each ISO8601 parse replaced by a plain TRY_CAST to TIMESTAMP: not the product's
    semantics (offsets are dropped), only to size what the parse costs."""
    assert ISO8601.search(sql), "the judging query has no ISO8601 parse"
    return ISO8601.sub(lambda m: f"TRY_CAST({m.group(1)} AS TIMESTAMP)", sql)


def _cut(judged: str, cte: str, nxt: str) -> str:
    """The judging query up to CTE `cte` (the one before `nxt`), selecting all of it."""
    marker = f"\n),\n\n{nxt} as ("
    assert marker in judged, f"the staged model's SQL has no CTE {nxt}"
    return judged[: judged.index(marker)] + f"\n)\nselect * from {cte}"


def variants(sql: dict[str, str], con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[str, str]]]:
    """Each variant's statements in order, (label, SQL); "P" and "W" hold the probes."""
    j = sql["judged"]
    entity_select = sql["entity"].split("from " + STAGED)[0]

    def readers(v: str, staged: str) -> list[tuple[str, str]]:
        """What reads the staged relation after the writes: reject, audit, resolution, mart."""
        sub = lambda s: s.replace(STAGED, staged).replace(CANDIDATE, f"{v}.entity").replace(REJECT, f"{v}.reject")  # noqa: E731
        return [
            ("conservation audit", sub(sql["conservation"])),
            ("reject resolution", sub(sql["resolve"])),
            ("mart counts", f"create table {v}.mart as " + sub(sql["mart"])),
        ]

    def reject(v: str, staged: str) -> tuple[str, str]:
        return ("reject", f"create table {v}.reject as " + sql["reject"].replace(STAGED, staged))

    ingestion = ("ingestion test", f"select count(*) from ({sql['ingestion']})")
    out: dict[str, list[tuple[str, str]]] = {"A": [("CTAS", "create table a.baseline as " + baseline_sql())]}
    out["B"] = [
        ("staged CTAS (all rows)", f"create table b.staged as {j}"),
        reject("b", "b.staged"),
        ("entity CTAS from staged", f"create table b.entity as {entity_select} from b.staged where _route = 'kept'"),
        *readers("b", "b.staged"),
        ingestion,
    ]
    for v, folded in (("c", False), ("e1", True)):
        out[v.upper()] = [
            ("staged_rest CTAS (judged)", f"create table {v}.staged_rest as select * from ({j}) where _route <> 'kept'"),
            reject(v, f"{v}.staged_rest"),
            ("entity CTAS (judged)", f"create table {v}.entity as {entity_select} from ({j}) where _route = 'kept'"),
            *readers(v, _union(f"{v}.entity", f"{v}.staged_rest")),
            ("ingestion folded", f"select count(*) from ({folded_ingestion(f'{v}.entity', f'{v}.staged_rest')})")
            if folded else ingestion,
        ]
    for v, folded in (("d", False), ("e2", True)):
        out[v.upper()] = [
            ("judged TEMP table", f"create temp table {v}_judged as {j}"),
            ("staged_rest CTAS (temp)", f"create table {v}.staged_rest as select * from {v}_judged where _route <> 'kept'"),
            ("entity CTAS (temp)", f"create table {v}.entity as {entity_select} from {v}_judged where _route = 'kept'"),
            ("drop TEMP table", f"drop table {v}_judged"),
            reject(v, f"{v}.staged_rest"),
            *readers(v, _union(f"{v}.entity", f"{v}.staged_rest")),
            ("ingestion folded", f"select count(*) from ({folded_ingestion(f'{v}.entity', f'{v}.staged_rest')})")
            if folded else ingestion,
        ]
    out["P"] = [
        ("baseline query, no write", _counted(con, baseline_sql())),
        ("judging: extract (casts, markers)", _counted(con, _cut(j, "extracted", "delivered"))),
        ("  the same, ISO8601 parse as TRY_CAST*", _counted(con, _plain_timestamps(_cut(j, "extracted", "delivered")))),
        ("judging: + delivery/dedupe windows", _counted(con, _cut(j, "ranked", "probed"))),
        ("judging: whole query (+ rules, route)", _counted(con, j)),
        ("bronze count", "select count(*) from bronze.raw_sales"),
    ]
    kept = "from w_judged where _route = 'kept'"
    out["W"] = [
        ("judged TEMP table (setup)", f"create temp table w_judged as {j}"),
        ("copy kept rows, the baseline's columns", f"create table w.base_cols as select {BASELINE_COLUMNS} {kept}"),
        ("copy kept rows, the entity's columns", f"create table w.entity as {entity_select} {kept}"),
        ("drop TEMP table", "drop table w_judged"),
    ]
    return out


def drop(con: duckdb.DuckDBPyConnection, schema: str) -> None:
    """Drop a variant's tables and checkpoint, so every variant starts from the same file."""
    con.execute(f"drop schema if exists {schema} cascade")
    con.execute("checkpoint")


def run_variant(con: duckdb.DuckDBPyConnection, name: str, stmts: list[tuple[str, str]], keep: bool) -> tuple[list[float], float]:
    """Each statement's seconds and the variant's peak RSS (GB); its tables are dropped afterwards
    unless `keep` (the first round keeps them for `check`)."""
    schema = name.lower()
    drop(con, schema)
    con.execute(f"create schema {schema}")
    _hwm_reset()
    secs = []
    for _, stmt in stmts:
        t = time.perf_counter()
        con.execute(stmt).fetchall()
        secs.append(time.perf_counter() - t)
    peak = _hwm_gb()
    if not keep:
        drop(con, schema)
    return secs, peak


def check(con: duckdb.DuckDBPyConnection) -> list[str]:
    """What must agree across variants (run once, after the first round, before schemas are dropped)."""
    notes = []
    kept = con.execute("select count(*) from b.entity").fetchone()[0]
    bronze = con.execute("select count(*) from bronze.raw_sales").fetchone()[0]
    mart = "select rule, rows_evaluated, rows_failed, rows_quarantined, rows_deduped from {}.mart order by all"
    reference = con.execute(mart.format("b")).fetchall()
    for v in ("c", "d", "e1", "e2"):
        e, r = (con.execute(f"select count(*) from {v}.{t}").fetchone()[0] for t in ("entity", "staged_rest"))
        same = con.execute(f"select count(*) from (select * from b.entity except all select * from {v}.entity)").fetchone()[0]
        assert e == kept and e + r == bronze and same == 0, (v, e, r, kept, bronze, same)
        assert con.execute(mart.format(v)).fetchall() == reference, f"{v}'s mart counts differ from B's"
        notes.append(f"{v.upper()}: entity {e:,} rows (= B's, row for row), staged_rest {r:,} ({r / bronze:.1%}), mart counts = B's")
    return notes


def rounds(con: duckdb.DuckDBPyConnection, order: list[str], plan: dict[str, list[tuple[str, str]]], repeat: int,
           after_first) -> tuple[dict[str, list[list[float]]], dict[str, list[float]], list[str]]:
    """Every variant `repeat` times, the order rotated each round so no variant always runs first
    (cold caches) or after the same one; after the first round `after_first()` checks what the
    variants left (its notes are returned) and their schemas are dropped. Per variant: each
    round's statement seconds, and each round's peak RSS."""
    times: dict[str, list[list[float]]] = {v: [] for v in order}
    peaks: dict[str, list[float]] = {v: [] for v in order}
    notes: list[str] = []
    for r in range(repeat):
        for v in order[r % len(order):] + order[: r % len(order)]:
            secs, peak = run_variant(con, v, plan[v], keep=r == 0)
            times[v].append(secs)
            peaks[v].append(peak)
        if r == 0:
            notes = after_first()
            for v in order:
                drop(con, v.lower())
    return times, peaks, notes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="keep the benchmark project in this directory")
    args = ap.parse_args()
    with workdir(args.keep, "assay-onewrite-") as work:
        db = generated_project(work, SPEC)
        load_bronze(db, args.rows)
        nodes = dbt_once(work)
        sql = dbt_sql(work)
        con = duckdb.connect(str(db))
        plan = variants(sql, con)
        order = ["A", "B", "C", "D", "E1", "E2", *PROBES]
        times, peaks, notes = rounds(con, order, plan, args.repeat, lambda: check(con))
        con.close()

    base = [t[0] for t in times["A"]]
    print(f"rows: {args.rows:,}; repeats: {args.repeat}; medians; ratio = median over rounds of total / A's total")
    baseline = nodes.pop("model.bench.baseline_ctas")
    print(f"dbt build once (reference): CTAS {baseline:.2f} s, nodes {sum(nodes.values()):.2f} s, "
          f"{sum(nodes.values()) / baseline:.2f}x; " + ", ".join(f"{k.split('.')[-1]} {s:.2f}" for k, s in nodes.items()))
    for v in order:
        totals = [sum(t) for t in times[v]]
        ratio = statistics.median(tot / b for tot, b in zip(totals, base))
        head = f"{v}: probes" if v in PROBES else f"{v}: total {statistics.median(totals):.2f} s, {ratio:.2f}x A"
        print(f"{head}; peak RSS {max(peaks[v]):.2f} GB")
        for i, (label, _) in enumerate(plan[v]):
            col = [t[i] for t in times[v]]
            print(f"  {label:38s} {statistics.median(col):7.2f} s  (rounds: {', '.join(f'{c:.2f}' for c in col)})")
    for n in notes:
        print("check " + n)


if __name__ == "__main__":
    main()
