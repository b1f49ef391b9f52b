"""gold.mart_data_quality, and the model that carries the cross-entity checks.

The mart is INCREMENTAL_UNMANAGED: every evaluation appends one accounting row per entity and
one row per rule, and SQLMesh never rebuilds it (unmanaged models are forward-only), so history
survives rule changes. Only rows_failed is a fact about a rule; the other counts describe the
entity's population, so rule rows carry zero there and sums stay additive at any grouping.
"""

from __future__ import annotations

from ...ir.model import Project
from ...lower.mart import mart_query
from . import naming
from .spelling import SqlmeshSpelling
from .modelblock import audit_call, model_block

INDENT = "  "


def mart_sql(project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The mart's file text: the mart query (assay.lower.mart) under its MODEL block."""
    block = model_block(
        name=naming.mart(project),
        kind="INCREMENTAL_UNMANAGED",
        dialect=low.dialect,
        description=low.lit("Per run: one (entity) accounting row per entity and one row per rule; history is kept."),
        tags="(assay)",
        grain="(run_id, entity, rule, mapping)",
    )
    return "\n".join([header, block, "", mart_query(low, project)])


def _strs(items) -> str:
    return "(" + ", ".join(items) + ")"


def cross_checks_sql(project: Project, low: SqlmeshSpelling, header: str) -> str | None:
    """Coverage and reconcile checks as audits of one model that depends on every entity they read.

    Attached to neither entity because a child's staged model may already read its parent, so
    the parent carrying an audit over the child would close a cycle. `fail` blocks, `flag` warns.
    """
    if not project.coverage and not project.reconcile:
        return None
    audits, rows, reads = [], [], set()
    for cov in project.coverage:
        parent, child = project.entity(cov.parent), project.entity(cov.child)
        reads |= {naming.admitted(project, parent, low.dialect), naming.admitted(project, child, low.dialect)}
        pairs = _strs(f"({low.lit(c)}, {low.lit(p)})" for c, p in cov.columns)
        audits.append(
            audit_call(
                "assay_coverage",
                parent=naming.admitted(project, parent, low.dialect),
                child=naming.admitted(project, child, low.dialect),
                pairs=pairs,
                min_children=str(cov.min),
                blocking="TRUE" if cov.on_fail == "fail" else "FALSE",
            )
        )
        rows.append((cov.name, "coverage", cov.on_fail))
    for rec in project.reconcile:
        args = {}
        for side_name, side in (("left", rec.left), ("right", rec.right)):
            rel = naming.admitted(project, project.entity(side.entity), low.dialect)
            reads.add(rel)
            args[f"{side_name}_relation"] = rel
            args[f"{side_name}_column"] = low.lit(side.column)
            args[f"{side_name}_agg"] = low.lit(side.agg or "")
            args[f"{side_name}_by"] = _strs(low.lit(c) for c in side.by)
        args["tolerance"] = low.lit(rec.tolerance)
        args["blocking"] = "TRUE" if rec.on_fail == "fail" else "FALSE"
        audits.append(audit_call("assay_reconcile", **args))
        rows.append((rec.name, "reconcile", rec.on_fail))
    block = model_block(
        name=naming.cross_checks(project),
        kind="FULL",
        dialect=low.dialect,
        description=low.lit("The cross-entity checks of the spec (coverage, reconcile), one row each; the checks are its audits."),
        tags="(assay)",
        depends_on=_strs(sorted(reads)),
        audits=audits,
    )
    selects = [
        f"SELECT {low.lit(name)} AS check_name, {low.lit(kind)} AS kind, {low.lit(on_fail)} AS on_fail"
        for name, kind, on_fail in sorted(rows)
    ]
    return "\n".join([header, block, "", "\nUNION ALL\n".join(selects), ""])
