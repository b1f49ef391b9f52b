"""Pipeline cost: the generated entity + reject + mart + audits against a plain CTAS, side by side.

Target (DESIGN.md section 6): at most 1.6x a `CREATE TABLE AS SELECT` of the entity's columns with
plain casts and the three lineage columns over clean bronze, on DuckDB.

    python benchmarks/pipeline.py --rows 10000000

Both sides run on the same DuckDB file in this process's environment; the assay side's time is
the sum of dbt's own execution times of the entity's nodes (from run_results.json), so dbt's
start-up is not counted against either side.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import duckdb

from benchproject import build_times, generated_project, workdir

SPEC = Path(__file__).parent / "specs" / "pipeline"

# The synthetic sales rows `start` to `stop` (exclusive) of one load. A key repeats for about 2%
# of the rows (re-deliveries): row i delivers row i - `redeliver`'s key again.
SALES_ROWS = """
select
  {load} as _load_id,
  (timestamp '{day}' + to_seconds(i % 86400))::varchar || 'Z' as _ingested_at,
  'r' || i::varchar as _source_row_id,
  'S' || (case when i % 50 = 0 then i - {redeliver} else i end)::varchar as sale_id,
  ' st' || (i % 97)::varchar || ' ' as store,
  case when i % 211 = 0 then 'bad' else 'ABC-' || lpad((i % 10000)::varchar, 4, '0') end as sku,
  case when i % 307 = 0 then 'x' else (1 + i % 20)::varchar end as qty,
  case when i % 401 = 0 then '12,50' else (i % 1000)::varchar || '.99' end as price,
  (i % 5)::varchar || '.00' as discount,
  '2026-01-0' || (1 + i % 9)::varchar || 'T10:00:00Z' as ts,
  case i % 4 when 0 then 'Web' when 1 then 'store' when 2 then 'PHONE' else 'fax' end as channel,
  'u' || i::varchar || '@example.com' as email
from range({start}, {stop}) t(i)
"""
# {rows} rows over seven loads of one day.
BRONZE = "create or replace table bronze.raw_sales as" + SALES_ROWS.format(
    load="'l' || (i % 7)::varchar", day="2026-01-01", redeliver=1, start=0, stop="{rows}")

# A dbt model, so both sides are timed by dbt the same way in the same run.
BASELINE = """{{ config(materialized='table') }}
select
  cast(sale_id as varchar) as sale_id, cast(store as varchar) as store, cast(sku as varchar) as sku,
  cast(qty as bigint) as quantity, cast(price as decimal(12,2)) as unit_price,
  cast(discount as decimal(12,2)) as discount, cast(ts as timestamp) as sold_at,
  cast(channel as varchar) as channel, cast(email as varchar) as email,
  _load_id, cast(_ingested_at as timestamp) as _ingested_at, _source_row_id
from {{ source('bronze', 'clean_sales') }}
"""
BASELINE_SOURCE = """version: 2
sources:
  - name: bronze
    schema: bronze
    tables: [{name: clean_sales}]
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keep", help="keep the benchmark project in this directory")
    args = ap.parse_args()
    with workdir(args.keep, "assay-bench-") as work:
        db = generated_project(work, SPEC)
        con = duckdb.connect(str(db))
        con.execute("create schema if not exists bronze")
        con.execute(BRONZE.format(rows=args.rows))
        # The baseline reads clean bronze: the same rows with every value castable.
        con.execute(
            "create or replace table bronze.clean_sales as select * replace ("
            "case when qty = 'x' then '1' else qty end as qty, "
            "case when price = '12,50' then '12.50' else price end as price) from bronze.raw_sales"
        )
        con.close()
        (work / "models" / "bench").mkdir(parents=True, exist_ok=True)
        (work / "models" / "bench" / "_baseline.yml").write_text(BASELINE_SOURCE.replace("name: bronze", "name: bench_bronze"))
        (work / "models" / "bench" / "baseline_ctas.sql").write_text(BASELINE.replace("source('bronze'", "source('bench_bronze'"))
        nodes = build_times(work)
        baseline = nodes.pop("model.bench.baseline_ctas")
        assay = sum(nodes.values())
        print(f"rows: {args.rows:,}")
        print(f"baseline CTAS (plain casts, clean bronze): {baseline:.2f} s")
        for uid, secs in sorted(nodes.items(), key=lambda kv: -kv[1]):
            print(f"  {uid}: {secs:.2f} s")
        print(f"assay entity + reject + mart + audits: {assay:.2f} s")
        print(f"ratio: {assay / baseline:.2f}x (target <= 1.6x)")


if __name__ == "__main__":
    main()
