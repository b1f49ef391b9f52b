"""What landed where after a build: kept, flagged, quarantined, deduped per entity."""

from __future__ import annotations

from ..ir.model import Project


def landing_counts(reader, project: Project) -> list[dict]:
    """One row per entity (bronze, kept, flagged, quarantined, deduped), as `assay demo` prints them.

    `reader` is the operator core's (runtime/operator.py::open_warehouse), over the schemas the
    build wrote; `project` is the core's project, with those schemas."""
    silver = project.schema("silver")
    out = []
    for e in project.entities:
        table = reader.relation(silver, f"{e.name}__current" if e.scd == "type2" else e.name)
        staged = reader.relation(silver, f"{e.name}__staged")
        bronze, deduped = reader.query(f"select count(*), count(case when _route = 'deduped' then 1 end) from {staged}")[0]
        if e.opted_in:
            kept, flagged = reader.query(f"select count(*), count(case when not _quality_ok then 1 end) from {table}")[0]
            (quarantined,) = reader.query(
                f"select count(*) from {reader.relation(silver, e.name + '__reject')} where resolved_at is null")[0]
        else:
            (kept,), flagged, quarantined = reader.query(f"select count(*) from {table}")[0], 0, 0
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
