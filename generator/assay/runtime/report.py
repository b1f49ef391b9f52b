"""What landed where after a build: kept, flagged, quarantined, deduped per entity."""

from __future__ import annotations

from pathlib import Path

from ..identifiers import quote_relation
from ..ir.model import Project


def landing_counts(conn, project: Project) -> list[dict]:
    """One row per entity (bronze, kept, flagged, quarantined, deduped), as `assay demo` prints them.

    `conn` is the warehouse's DB-API connection from `runtime.warehouse.connect`; the SQL is in
    DuckDB's spelling, which a Spark connection turns into Spark's."""
    silver = project.schema("silver")
    cur = conn.cursor()

    def one(sql: str) -> tuple:
        cur.execute(sql)
        return tuple(cur.fetchone())

    out = []
    for e in project.entities:
        table = quote_relation("duckdb", silver, f"{e.name}__current" if e.scd == "type2" else e.name)
        staged = quote_relation("duckdb", silver, f"{e.name}__staged")
        bronze, deduped = one(f"select count(*), count(case when _route = 'deduped' then 1 end) from {staged}")
        if e.opted_in:
            kept, flagged = one(f"select count(*), count(case when not _quality_ok then 1 end) from {table}")
            (quarantined,) = one(f"select count(*) from {quote_relation('duckdb', silver, e.name + '__reject')} where resolved_at is null")
        else:
            (kept,), flagged, quarantined = one(f"select count(*) from {table}"), 0, 0
        out.append({"entity": e.name, "bronze": bronze, "kept": kept, "flagged": flagged,
                    "quarantined": quarantined, "deduped": deduped})
    return out


def format_counts(rows: list[dict]) -> str:
    """The counts as the aligned table `assay demo` prints."""
    cols = ["entity", "bronze", "kept", "flagged", "quarantined", "deduped"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip()]
    for r in rows:
        lines.append("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
    return "\n".join(lines)
