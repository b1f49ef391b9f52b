"""`assay report` over a large history, beside the build that produced it.

A real `dbt build` of the pipeline benchmark's spec over N bronze rows (1M by default) on DuckDB,
then its `gold.mart_data_quality` grown to `--runs` runs (a year of daily builds: the latest run's
rows copied under earlier run ids and dates), then `assay report` (gather from the warehouse and
render the HTML page) and `assay report --json`, timed in this process. Printed side by side: the
build's own execution time and the report's, as a ratio.

    python benchmarks/report.py --rows 1000000 --runs 365
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parent))
from pipeline import BRONZE, SPEC  # noqa: E402  (the same bronze shape as the pipeline benchmark)

from benchproject import build_times, generated_project, workdir  # noqa: E402
from assay.cli.main import cli  # noqa: E402

GROW_MART = """
insert into gold.mart_data_quality
select m.* replace (
    'bench-run-' || d.n::varchar as run_id,
    m.run_started_at - to_days(d.n) as run_started_at,
    m.run_date - to_days(d.n) as run_date
)
from gold.mart_data_quality as m, range(1, {runs}) as d(n)
"""


def _timed(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    res = CliRunner().invoke(cli, args)
    took = time.perf_counter() - start
    if res.exit_code != 0:
        raise SystemExit(f"assay {' '.join(args)} failed ({res.exit_code}):\n{res.output[-3000:]}")
    return took, res.output


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=365)
    ap.add_argument("--keep", help="keep the benchmark project in this directory")
    args = ap.parse_args()
    with workdir(args.keep, "assay-report-bench-") as work:
        db = generated_project(work, SPEC)
        con = duckdb.connect(str(db))
        con.execute("create schema if not exists bronze")
        con.execute(BRONZE.format(rows=args.rows))
        con.close()
        build = sum(build_times(work).values())
        con = duckdb.connect(str(db))
        con.execute(GROW_MART.format(runs=args.runs))
        mart_rows = con.execute("select count(*) from gold.mart_data_quality").fetchone()[0]
        reject_rows = con.execute("select count(*) from silver.sale__reject").fetchone()[0]
        con.close()

        base = ["--project", str(work), "--spec", str(SPEC), "--now", "2026-01-02T00:00:00Z"]
        page = work / "report.html"
        _timed(["report", *base, "--json"])  # warm-up: imports and the first connection are not the report's cost
        html_s, _ = _timed(["report", *base, "--out", str(page)])
        json_s, out = _timed(["report", *base, "--json"])
        runs_seen = len(json.loads(out)["entities"][0]["trend"])

        print(f"bronze rows: {args.rows:,}; runs in mart_data_quality: {runs_seen} ({mart_rows:,} mart rows); "
              f"reject rows: {reject_rows:,}")
        print(f"dbt build (execution time of every node): {build:.2f} s")
        print(f"assay report (HTML, {page.stat().st_size / 1024:.0f} KiB): {html_s:.2f} s  -> {html_s / build:.2f}x the build")
        print(f"assay report --json: {json_s:.2f} s  -> {json_s / build:.2f}x the build")


if __name__ == "__main__":
    main()
