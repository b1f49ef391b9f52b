"""Loading bronze CSV files into a warehouse, keeping NULL and empty text apart (demo and tests)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

from ..identifiers import quote_identifier, quote_relation
from .csvnull import read_csv, write_csv


def restamp(rows: list[list[Optional[str]]], columns: list[str], latest: datetime) -> list[list[Optional[str]]]:
    """Shift every `_ingested_at` so the newest delivery is `latest`, keeping the gaps between loads.

    Sample data is written once; shifting it at load time keeps the demo's freshness
    thresholds meaningful on any day without putting a clock into generation.
    """
    if "_ingested_at" not in columns:
        return rows
    i = columns.index("_ingested_at")
    parsed = []
    for r in rows:
        try:
            parsed.append(datetime.fromisoformat(r[i].replace("Z", "+00:00")) if r[i] else None)
        except ValueError:
            parsed.append(None)
    stamps = [p for p in parsed if p is not None]
    if not stamps:
        return rows
    shift = latest - max(stamps)
    out = []
    for r, p in zip(rows, parsed):
        r = list(r)
        if p is not None:
            r[i] = (p + shift).astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(r)
    return out


def restamp_csv_dir(csv_dir: Path, latest: datetime) -> None:
    """Rewrite each CSV in `csv_dir` in place with its `_ingested_at` restamped (see `restamp`).

    `assay init` does this so that a sample loaded by hand soon after is fresh for
    `dbt source freshness` (decision 0016), exactly as the demo's own loader makes it.
    """
    for path in sorted(Path(csv_dir).glob("*.csv")):
        columns, rows = read_csv(path)
        write_csv(path, columns, restamp(rows, columns, latest))


def load_csv_dir_duckdb(db_path: Path, csv_dir: Path, schema: str = "bronze", latest: Optional[datetime] = None) -> dict[str, int]:
    """Create one all-text table per CSV file in `csv_dir`; returns rows loaded per table."""
    import duckdb

    latest = latest or datetime.now(timezone.utc) - timedelta(hours=1)
    counts = {}
    con = duckdb.connect(str(db_path))
    try:
        # Names come from data (a file name, a CSV header): quoted with their quote doubled, so
        # a header such as `x" varchar); drop table ...` stays one column name (issue 21).
        q_schema = quote_identifier(schema, "duckdb")
        con.execute(f"create schema if not exists {q_schema}")
        for path in sorted(Path(csv_dir).glob("*.csv")):
            columns, rows = read_csv(path)
            rows = restamp(rows, columns, latest)
            name = path.stem
            relation = quote_relation("duckdb", schema, name)
            cols = ", ".join(f"{quote_identifier(c, 'duckdb')} varchar" for c in columns)
            con.execute(f"create or replace table {relation} ({cols})")
            if rows:
                con.executemany(f'insert into {relation} values ({", ".join("?" * len(columns))})', rows)
            counts[name] = len(rows)
    finally:
        con.close()
    return counts
