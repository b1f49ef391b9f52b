"""What landed where after a build: kept, flagged, quarantined, deduped per entity."""

from __future__ import annotations

from pathlib import Path

from ..identifiers import quote_relation
from ..ir.model import Project


def landing_counts(db_path: Path, project: Project) -> list[dict]:
    """One row per entity, read back from a DuckDB warehouse."""
    import duckdb

    silver = project.schema("silver")
    out = []
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        for e in project.entities:
            table = f"{e.name}__current" if e.scd == "type2" else e.name
            staged = quote_relation("duckdb", silver, f"{e.name}__staged")
            row = {"entity": e.name}
            row["bronze"] = con.execute(f"select count(*) from {staged}").fetchone()[0]
            row["deduped"] = con.execute(f"select count(*) from {staged} where _route = 'deduped'").fetchone()[0]
            if e.opted_in:
                kept, flagged = con.execute(
                    f"select count(*), count(*) filter (where not _quality_ok) from {quote_relation('duckdb', silver, table)}"
                ).fetchone()
                row["quarantined"] = con.execute(f"select count(*) from {quote_relation('duckdb', silver, e.name + '__reject')} where resolved_at is null").fetchone()[0]
            else:
                kept = con.execute(f"select count(*) from {quote_relation('duckdb', silver, table)}").fetchone()[0]
                flagged, row["quarantined"] = 0, 0
            row["kept"], row["flagged"] = kept, flagged
            out.append(row)
    finally:
        con.close()
    return out


def format_counts(rows: list[dict]) -> str:
    """The counts as the aligned table `assay demo` prints."""
    cols = ["entity", "bronze", "kept", "flagged", "quarantined", "deduped"]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    lines = ["  ".join(c.ljust(widths[c]) for c in cols).rstrip()]
    for r in rows:
        lines.append("  ".join(str(r[c]).ljust(widths[c]) for c in cols).rstrip())
    return "\n".join(lines)
