"""How build cost grows with bronze rows on Spark (local mode) and on DuckDB: a ratio table, not a race.

The same generated project (benchmarks/specs/pipeline: one entity with dedupe, quarantine,
flags, its reject history and the quality mart) is built from scratch on both engines at each
bronze size, with the same bronze rows: pipeline.py's deterministic generator runs once per
size in DuckDB and is written to a parquet file, which DuckDB and Spark both load as
`bronze.raw_sales`. Measured in one run:

    python benchmarks/spark_scaling.py --rows 10000,100000,1000000

For each size and engine: the wall time of `dbt build --threads 1` (with dbt's and Spark's
start-up) and the sum of dbt's own execution times of the nodes (without start-up). The table
gives Spark/DuckDB per size and each engine's growth from one size to the next. Spark runs as a
dbt-spark `session` profile (local[2], 3 GB driver, parquet tables), as `assay init --engine
spark` writes it; a cluster changes the constant, not the shape (docs/engines.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).parent))
from pipeline import BRONZE, SPEC  # noqa: E402  (the house generator and spec, shared with pipeline.py)

from assay.api import generate_dbt_project  # noqa: E402
from assay.runtime import spark  # noqa: E402
from assay.runtime.dbt import run_dbt  # noqa: E402
from assay.scaffold import duckdb_profile, spark_profile, write_dbt_skeleton, write_spark_log_config  # noqa: E402


def bronze_parquet(rows: int, path: Path) -> None:
    """pipeline.py's bronze at `rows` rows, written once as parquet for both engines."""
    con = duckdb.connect()
    con.execute("create schema bronze")
    con.execute(BRONZE.format(rows=rows))
    con.execute(f"copy bronze.raw_sales to '{path}' (format parquet)")
    con.close()


def project(work: Path, engine: str) -> Path:
    """A fresh dbt project with the benchmark spec generated into it, bronze not loaded yet."""
    work.mkdir(parents=True)
    if engine == "spark":
        profile = spark_profile("bench", (work / "spark").resolve().as_posix())
        write_spark_log_config(work / "spark")
    else:
        profile = duckdb_profile("bench", (work / "bench.duckdb").resolve().as_posix())
    write_dbt_skeleton(work, "bench", profile)
    generate_dbt_project(SPEC, work)
    deps = run_dbt(work, "deps")
    if deps.returncode != 0:
        raise SystemExit(deps.stdout[-3000:])
    return work


def load(work: Path, engine: str, parquet: Path) -> None:
    if engine == "spark":
        # A child Spark from the project's profile (the same warehouse and metastore dbt uses).
        spark.query(work, ["create database if not exists bronze",
                           f"create table bronze.raw_sales using parquet as select * from parquet.`{parquet}`"])
    else:
        con = duckdb.connect(str(work / "bench.duckdb"))
        con.execute("create schema if not exists bronze")
        con.execute(f"create table bronze.raw_sales as select * from read_parquet('{parquet}')")
        con.close()


def build(work: Path) -> tuple[float, float, dict[str, float]]:
    """Wall seconds of `dbt build --threads 1`, the sum of node execution times, and each node's."""
    started = time.perf_counter()
    proc = run_dbt(work, "build", "--threads", "1")
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        failed = [line for line in proc.stdout.splitlines() if "ERROR" in line or "FAIL" in line]
        raise SystemExit(f"dbt build failed in {work}:\n" + "\n".join(failed[-20:]))
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    nodes = {r["unique_id"]: r["execution_time"] for r in results}
    return wall, sum(nodes.values()), nodes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="10000,100000,1000000", help="bronze sizes, comma-separated")
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--keep", help="keep the benchmark projects in this directory")
    args = ap.parse_args()
    sizes = [int(x) for x in args.rows.split(",")]
    engines = args.engines.split(",")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="assay-spark-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    measured: dict[tuple[str, int], tuple[float, float]] = {}
    try:
        for rows in sizes:
            parquet = (work / f"bronze_{rows}.parquet").resolve()
            bronze_parquet(rows, parquet)
            for engine in engines:
                proj = project(work / f"{engine}_{rows}", engine)
                load(proj, engine, parquet)
                wall, execution, nodes = build(proj)
                measured[engine, rows] = (wall, execution)
                slowest = ", ".join(f"{k.split('.')[-1]} {v:.1f}" for k, v in sorted(nodes.items(), key=lambda kv: -kv[1])[:3])
                # The machine's load beside each measurement: on a shared machine the ratios are
                # only as good as the load was steady.
                load1 = os.getloadavg()[0]
                print(f"{engine:6} {rows:>9,} rows: build {wall:6.1f} s wall, {execution:6.1f} s in nodes "
                      f"({len(nodes)} nodes; slowest: {slowest}; load average {load1:.1f} on {os.cpu_count()} cores)", flush=True)
        print()
        print(table(sizes, engines, measured))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def table(sizes: list[int], engines: list[str], measured: dict) -> str:
    """The markdown table docs/engines.md holds: seconds, Spark/DuckDB, growth per size step."""
    head = ["bronze rows"]
    for e in engines:
        head += [f"{e} wall s", f"{e} nodes s"]
    both = "duckdb" in engines and "spark" in engines
    if both:
        head += ["spark/duckdb wall", "spark/duckdb nodes"]
    head += [f"{e} growth (nodes)" for e in engines]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for i, rows in enumerate(sizes):
        cells = [f"{rows:,}"]
        for e in engines:
            wall, nodes = measured[e, rows]
            cells += [f"{wall:.1f}", f"{nodes:.1f}"]
        if both:
            (dw, dn), (sw, sn) = measured["duckdb", rows], measured["spark", rows]
            cells += [f"{sw / dw:.1f}x", f"{sn / dn:.1f}x"]
        for e in engines:
            cells.append("" if i == 0 else f"{measured[e, rows][1] / measured[e, sizes[i - 1]][1]:.1f}x "
                                           f"for {rows / sizes[i - 1]:.0f}x rows")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
