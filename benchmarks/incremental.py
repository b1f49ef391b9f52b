"""Incremental cost: a load that adds a small fraction of new rows to a large bronze, built
incrementally, against a full build of the same entity, side by side in one run.

Target (issue 18, item 4): an incremental build after a load that adds 1% to a 10M-row bronze
costs at most 10% of a full build of the same entity, with the reject, mart and history steps
bounded the same way.

    python benchmarks/incremental.py --rows 10000000 --added 0.01

One DuckDB file, the pipeline spec (benchmarks/specs/pipeline) declared `materialized:
incremental`. Steps, each a `dbt build --threads 1` timed by dbt's own per-node execution times
(run_results.json, so dbt's start-up counts against neither side):
1. the first build over N bronze rows (a full build: the ledger is created);
2. a load of N x ADDED rows appended to bronze (new deliveries: about 2% of them re-deliver an
   existing key, as bronze does), then an incremental build;
3. the same bronze rebuilt with `--full-refresh` (what a full build of that bronze costs).
The ratio is step 2 over step 3, per node and in total.
"""

from __future__ import annotations

import argparse
import resource
import shutil
from pathlib import Path

import duckdb

from benchproject import build_times, generated_project, workdir
from pipeline import SALES_ROWS

PIPELINE_SPEC = Path(__file__).parent / "specs" / "pipeline"

BRONZE_TABLE = """
create table bronze.raw_sales (_load_id varchar, _ingested_at varchar, _source_row_id varchar,
  sale_id varchar, store varchar, sku varchar, qty varchar, price varchar, discount varchar,
  ts varchar, channel varchar, email varchar)
"""


def incremental_spec(dest: Path) -> Path:
    """The pipeline spec with its entity declared incremental (what the benchmark measures)."""
    shutil.copytree(PIPELINE_SPEC, dest)
    entities = dest / "entities.yml"
    text = entities.read_text()
    marker = "    grain: one row per sale, latest delivery wins\n"
    assert marker in text, "benchmarks/specs/pipeline/entities.yml changed: update incremental.py"
    entities.write_text(text.replace(marker, marker + "    materialized: incremental\n"))
    return dest


def load(db: Path, load_id: str, day: str, start: int, stop: int) -> None:
    con = duckdb.connect(str(db))
    try:
        # A re-delivery repeats a key of the previous load's range (or of this load, first load).
        con.execute("insert into bronze.raw_sales" + SALES_ROWS.format(
            load=f"'{load_id}'", day=day, start=start, stop=stop, redeliver=1 if start == 0 else start // 2))
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--added", type=float, default=0.01, help="the new load's size, a fraction of --rows")
    ap.add_argument("--keep", help="keep the benchmark project in this directory")
    args = ap.parse_args()
    added = max(1, int(args.rows * args.added))
    with workdir(args.keep, "assay-bench-inc-") as work:
        db = generated_project(work, incremental_spec(work / "spec"))
        con = duckdb.connect(str(db))
        con.execute("create schema if not exists bronze")
        con.execute(BRONZE_TABLE)
        con.close()
        load(db, "l1", "2026-01-01", 0, args.rows)
        first = build_times(work)
        load(db, "l2", "2026-01-02", args.rows, args.rows + added)
        incremental = build_times(work)
        full = build_times(work, "--full-refresh")
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(f"bronze: {args.rows:,} rows, then a load of {added:,} ({args.added:.1%})")
        print(f"{'node':58} {'first':>8} {'incr.':>8} {'full':>8} {'incr./full':>10}")
        for uid in sorted(full, key=lambda u: -full[u]):
            ratio = incremental.get(uid, 0.0) / full[uid] if full[uid] else float("nan")
            print(f"{uid:58} {first.get(uid, 0.0):8.2f} {incremental.get(uid, 0.0):8.2f} {full[uid]:8.2f} {ratio:10.2f}")
        total_inc, total_full = sum(incremental.values()), sum(full.values())
        print(f"{'total':58} {sum(first.values()):8.2f} {total_inc:8.2f} {total_full:8.2f} {total_inc / total_full:10.2f}")
        print(f"ratio: incremental build / full build = {total_inc / total_full:.2f}x (target <= 0.10x)")
        print(f"peak RSS of dbt's processes: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
