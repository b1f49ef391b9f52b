"""What the SQLMesh staged model's recorders cost: a whole `sqlmesh plan` of the pipeline spec with
them, against the same plan with them taken out, side by side, alternated.

The staged model of every SQLMesh entity ends with post-statements that record a build a blocking
audit is about to stop (decisions 0932, 0935): `@assay_record_ingestion_stop` runs the
ingestion-metadata audit's query once more (bounded by the staged ranks, decision 0412),
`@assay_record_failed_rules` counts each `fail` rule's rows in one pass, and the key recorders of
an entity without dedupe measure the declared checks when the key repeats. This script measures
what they add to a plan that stops on nothing (the usual build): the plan's wall time in this
process, each variant on a fresh copy of the same bronze, the order alternated every round.

    python benchmarks/sqlmesh_recorders.py --rows 1000000 --rounds 3
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb

from benchproject import workdir
from pipeline import BRONZE, SPEC

from assay.api_sqlmesh import duckdb_config, generate_sqlmesh_project

RECORDERS = re.compile(r"^@assay_record_(ingestion_stop|failed_rules|declared_checks|sql_check)\((?:.|\n)*?^\);\n", re.M)


def project(root: Path, strip: bool) -> Path:
    """The pipeline spec as a SQLMesh project on `root/w.duckdb`; `strip`: without the staged
    model's recorders."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.yaml").write_text(duckdb_config(str(root / "w.duckdb")))
    generate_sqlmesh_project(SPEC, root)
    staged = next(root.glob("models/assay/*/*__staged.sql"))
    text = staged.read_text()
    stripped = RECORDERS.sub("", text)
    if strip:
        if stripped == text:
            raise SystemExit(f"no recorder found in {staged}: the generated model changed; update RECORDERS")
        staged.write_text(stripped)
    return root


def plan_seconds(root: Path, bronze: Path) -> float:
    """One `plan` (auto-applied, prod) on a fresh copy of the bronze file."""
    from sqlmesh import Context

    shutil.copy(bronze, root / "w.duckdb")
    ctx = Context(paths=str(root))
    start = time.perf_counter()
    ctx.plan(auto_apply=True, no_prompts=True, execution_time=datetime.now(timezone.utc) + timedelta(days=1))
    took = time.perf_counter() - start
    ctx.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--keep", help="keep the benchmark projects in this directory")
    args = ap.parse_args()
    with workdir(args.keep, "assay-bench-sqlmesh-") as work:
        bronze = work / "source.duckdb"
        con = duckdb.connect(str(bronze))
        con.execute("create schema if not exists bronze")
        con.execute(BRONZE.format(rows=args.rows))
        con.close()
        variants = {"with recorders": project(work / "with", strip=False),
                    "without": project(work / "without", strip=True)}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for r in range(args.rounds):
            order = list(variants) if r % 2 == 0 else list(reversed(variants))
            for name in order:
                times[name].append(plan_seconds(variants[name], bronze))
            print(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in variants), flush=True)
        med = {n: statistics.median(t) for n, t in times.items()}
        low = {n: min(t) for n, t in times.items()}
        print(f"rows: {args.rows:,}")
        for n in variants:
            print(f"  {n}: median {med[n]:.2f} s, fastest {low[n]:.2f} s")
        # A plan's time on this VM jumps by seconds at random (a checkpoint, the other core's work):
        # the fastest round of each is the steadier comparison of what the SQL costs.
        print(f"recorders add {low['with recorders'] - low['without']:.2f} s to the fastest plan "
              f"({low['with recorders'] / low['without']:.3f}x), {med['with recorders'] - med['without']:.2f} s "
              f"to the median ({med['with recorders'] / med['without']:.3f}x)")


if __name__ == "__main__":
    main()
