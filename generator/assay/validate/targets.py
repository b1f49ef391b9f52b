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


def _read_only_declared(enforcement: str) -> Finder:
    """Declared checks of tables a `tables_version: 1` document declares (assay only reads them)."""

    def finds(ctx: Context, declared: dict, _sql: list):
        files = {}
        for file, doc, _r in ctx.loaded.table_docs:
            for tname in doc.tables:
                if tname not in ctx.entities:
                    files.setdefault(tname, file)
        for owner, checks in sorted(declared.items()):
            for check in checks:
                if check.enforcement == enforcement and owner in files:
                    yield files[owner], check.line, f"{enforcement} check `{check.check_id}` of `{owner}`"

    return finds


def _is_entity_check(ctx: Context, check) -> bool:
    return check.namespace == ctx.loaded.settings.schemas.silver and check.table in ctx.entities


def _sql_files(on_failure: tuple[str, ...], of_entities: bool) -> Finder:
    """SQL check files by resolved `on_failure`, of entities or of tables assay only reads."""

    def finds(ctx: Context, _declared: dict, sql_checks: list):
        for rel_path, check in sql_checks:
            if check.on_failure in on_failure and _is_entity_check(ctx, check) == of_entities:
                line = (check.on_failure_line or 1) if check.on_failure == "keep" else 1
                yield rel_path, line, f"`on_failure: {check.on_failure}` SQL check file `{rel_path}` (check `{check.name}`)"

    return finds


LIMITS: tuple[Limit, ...] = (
    Limit(
        "sqlmesh",
        _incremental,
        "needs the ledger-style staged model, which exists for dbt only",
        "use `materialized: table` to generate for SQLMesh, or generate for dbt",
    ),
    # Checks of entities run on SQLMesh as audits (decisions 0210-0213); what SQLMesh cannot do:
    Limit(
        "sqlmesh",
        _sql_files(("keep",), of_entities=True),
        "needs the table marked kept and its readers refused until its checks pass again, which SQLMesh "
        "cannot do: an audit can only stop the plan or run it belongs to, never a later one (decision 0213)",
        "use `on_failure: block` (a failing plan leaves the virtual layer on the previous data) or "
        "`on_failure: warn` to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _read_only_declared("required"),
        "would never stop the table's readers: the SQLMesh target runs checks as audits of the models assay "
        "builds, and this table is only read (decision 0213)",
        "make it `enforcement: advisory` or remove it to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _read_only_declared("advisory"),
        "is not run: the SQLMesh target runs checks as audits of the models assay builds, and this table is "
        "only read (decision 0213)",
        "generate for dbt to record its results",
        severity="warning",
    ),
    Limit(
        "sqlmesh",
        _sql_files(("block", "keep"), of_entities=False),
        "would never stop the table's readers: the SQLMesh target runs checks as audits of the models assay "
        "builds, and this table is only read (decision 0213)",
        "move the file out of the checks directory to generate for SQLMesh, or generate for dbt",
    ),
    Limit(
        "sqlmesh",
        _sql_files(("warn",), of_entities=False),
        "is not run: the SQLMesh target runs checks as audits of the models assay builds, and this table is "
        "only read (decision 0213)",
        "generate for dbt to record its results",
        severity="warning",
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
