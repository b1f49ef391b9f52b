"""What each target cannot realise, refused by validation before anything is emitted.

A target that cannot do what a spec asks must say so by file and line when the spec is
validated for it, never raise while writing files and never drop a construct silently.
Each limit is data: the target, what it cannot do, why, and what the author can do instead.
A limit of severity `warning` is a construct the target skips without changing any row
(an advisory check): it is reported, not refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator

from ..errors import Diagnostic
from .context import Context

CODE = "UNSUPPORTED_BY_TARGET"
TARGETS = ("dbt", "sqlmesh")

# (file, line, subject) of every occurrence of a construct, from the context and normalized checks.
Finder = Callable[[Context, dict, list], Iterator[tuple[str, int, str]]]


@dataclass(frozen=True)
class Limit:
    target: str
    finds: Finder
    reason: str  # completes "<subject> ..."
    remedy: str
    severity: str = "error"


def _incremental(ctx: Context, _declared: dict, _sql: list):
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.materialized == "incremental":
            yield file, ent.line("materialized") or ent.line(), f"entity `{name}` (`materialized: incremental`)"


def _declared(enforcement: str) -> Finder:
    def finds(ctx: Context, declared: dict, _sql: list):
        files = {name: file for name, (file, _e) in ctx.entities.items()}
        for _f, doc, _r in ctx.loaded.table_docs:
            for tname in doc.tables:
                files.setdefault(tname, _f)
        for owner, checks in sorted(declared.items()):
            for check in checks:
                if check.enforcement == enforcement and owner in files:
                    yield files[owner], check.line, f"{enforcement} check `{check.check_id}` of `{owner}`"

    return finds


def _sql_files(_ctx: Context, _declared: dict, sql_checks: list):
    for rel_path, check in sql_checks:
        yield rel_path, 1, f"SQL check file `{rel_path}` (check `{check.name}`)"


LIMITS: tuple[Limit, ...] = (
    Limit(
        "sqlmesh",
        _incremental,
        "needs the ledger-style staged model, which exists for dbt only",
        "use `materialized: table` to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _declared("required"),
        "would never hold a table back: the SQLMesh target does not run declared checks (document 000) yet",
        "make it `enforcement: advisory` or remove it to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _declared("advisory"),
        "is not run: the SQLMesh target does not run declared checks (document 000) yet",
        "generate for dbt to record its results",
        severity="warning",
    ),
    Limit(
        "sqlmesh",
        _sql_files,
        "would not run: the SQLMesh target does not run SQL check files (document 002) yet",
        "move the file out of the checks directory to generate for SQLMesh, or generate for dbt",
    ),
)


def check_target(ctx: Context, target: str, declared: dict, sql_checks: list) -> list[Diagnostic]:
    """Every construct of the spec that `target` cannot realise, by file and line."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r}; one of {', '.join(TARGETS)}")
    out = []
    for limit in LIMITS:
        if limit.target != target:
            continue
        verb = "refused" if limit.severity == "error" else "skipped"
        for file, line, subject in limit.finds(ctx, declared, sql_checks):
            message = f"{verb} on {target}: {subject} {limit.reason}; {limit.remedy}."
            out.append(Diagnostic(file, line or 1, message, CODE, severity=limit.severity))
    return out
