"""gold.mart_data_quality, and the model that carries the cross-entity checks.

Each entity's runs append to a part of their own, `gold.mart_data_quality__<entity>`, which
depends on that entity's staged model only; `gold.mart_data_quality` is a view over every part
(decision 0969). SQLMesh evaluates nothing downstream of a failed audit: one mart reading every
staged model lost the run for every entity when one entity's staged audits (a `fail` rule, the
ingestion-metadata audit, the key) stopped it, or when a parent set back skipped its child's
staged model. A part is skipped exactly when its own entity was not judged, as dbt's
on-run-end hook records (decision 0942). The view holds no data, so it needs no evaluation in a
run that skips it: the parts it reads are forward-only tables that every version shares.

One stop still skips a part although its entity was judged: the staged model's key audit (a
repeated key among the rows about to be kept, decision 0921), which dbt judges after the staged
table is built, recording the run. The staged model's last post-statement then writes the
entity's rows of the build, the part's own query over the staged table, into a plain table the
view reads too (`naming.stopped_counts`, decision 1143); the view's pre-statement creates it, since
a view over a missing table cannot be created.

The parts are INCREMENTAL_UNMANAGED: every evaluation appends one accounting row for the entity
and one row per rule, and SQLMesh never rebuilds them (unmanaged models are forward-only), so
history survives rule changes. Only rows_failed is a fact about a rule; the other counts
describe the entity's population, so rule rows carry zero there and sums stay additive at any
grouping.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from ...lower.mart import COLUMNS, mart_query
from . import naming
from .spelling import SqlmeshSpelling
from .modelblock import audit_call, model_block

INDENT = "  "


def mart_part_sql(project: Project, entity: Entity, low: SqlmeshSpelling, header: str) -> str:
    """An entity's mart part's file text: the mart query (assay.lower.mart) of that entity alone."""
    block = model_block(
        name=naming.mart_part(project, entity),
        kind="INCREMENTAL_UNMANAGED",
        dialect=low.dialect,
        description=low.lit(f"Per run of {entity.name}: its (entity) accounting row and one row per rule; "
                            "history is kept. Read through gold.mart_data_quality."),
        tags="(assay, assay_mart)",
        grain="(run_id, entity, rule, mapping)",
    )
    return "\n".join([header, block, "", mart_query(low, project, (entity,))])


def mart_sql(project: Project, low: SqlmeshSpelling, header: str) -> str:
    """The mart's file text: a view over every entity's part and the counts of stopped builds,
    its columns named."""
    block = model_block(
        name=naming.mart(project),
        kind="VIEW",
        dialect=low.dialect,
        description=low.lit("Per run: one (entity) accounting row per entity and one row per rule; history is kept."),
        tags="(assay)",
        grain="(run_id, entity, rule, mapping)",
    )
    columns = ", ".join(COLUMNS)
    stopped = naming.stopped_counts(project)
    # SQLMesh runs these before it creates the view: the table it reads beside the parts exists
    pre = [f"CREATE SCHEMA IF NOT EXISTS {project.schema('meta')};",
           f"@assay_mart_table({low.string(stopped)});"]
    selects = [low.sql("select {} from {}", columns, naming.mart_part(project, e)) for e in project.entities]
    selects.append(low.sql("select {} from {}", columns, stopped))
    return "\n".join([header, block, "", *pre, "", low.sql("\nunion all\n").join(selects) + ";", ""])


def stopped_counts_recorder(entity: Entity, project: Project, low: SqlmeshSpelling,
                            stops: list[tuple[str, bool]]) -> str | None:
    """The staged model's post-statement that records the entity's mart rows of a build its key
    audit or a `fail` rule's audit is about to stop (decisions 1143, 1162), or None when no stop
    of the staged model records (an entity with `dedupe:` and no `fail` rule). ``stops`` are the staged model's blocking
    audits as (query over ``@this_model``, whether its stop records; assay.lower.mart decides):
    it records when a recording stop's query returns a row and no stop that records nothing
    returns one: the build the part misses and dbt records."""
    recording = [q for q, records in stops if records]
    silent = [q for q, records in stops if not records]
    if not recording:
        return None

    def any_row(queries: list[str]) -> str:
        return low.sql("\nunion all\n").join(low.sql("select 1 as stop from ({}) as s{}", q, n)
                                              for n, q in enumerate(queries, 1))

    rows = mart_query(low, project, (entity,), staged="@this_model").strip()
    lines = ["@assay_record_stopped_counts(",
             f"{INDENT}table_name := {low.string(entity.name)},",
             f"{INDENT}counts := {low.string(naming.stopped_counts(project))},",
             f"{INDENT}only_if := {_block(any_row(recording))},"]
    if silent:
        lines.append(f"{INDENT}unless := {_block(any_row(silent))},")
    lines += [f"{INDENT}rows := (", _indent(rows, INDENT * 2), f"{INDENT})", ")"]
    return "\n".join(lines)


def _block(query: str) -> str:
    """A macro argument holding a query: on one line when it is one line, else indented below."""
    if "\n" not in query:
        return f"({query})"
    return f"(\n{_indent(query, INDENT * 2)}\n{INDENT})"


def _indent(text: str, by: str) -> str:
    """Each line of `text` indented by `by`, blank lines left blank. Only for the queries above,
    whose literals (entity, mapping and rule names) never span lines."""
    return "\n".join(by + line if line else line for line in text.split("\n"))


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
