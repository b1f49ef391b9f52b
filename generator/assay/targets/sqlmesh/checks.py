"""Table checks on the SQLMesh target: declared checks (000) and SQL check files (002).

An entity with checks gets, in its model file (decisions 0210-0214):

- after the query, post-statements that measure and record, run by SQLMesh inside the
  evaluation right after it wrote the table: ``@assay_record_declared_checks`` (every declared
  check in ONE measuring query over ``@this_model``) and one ``@assay_record_sql_check`` per SQL
  check file (the file's query with its own table replaced by ``@this_model``). Both insert into
  ``<meta>.assay_check_results``, the dbt target's table, under SQLMesh's run id (0204);
- one inline audit per check, ``assay_check__<id>`` or ``assay_sql_check__<name>``, which
  returns the recorded result of this run when the check did not pass: blocking for
  ``required`` and ``block``, non-blocking for ``advisory`` and ``warn``. A failing blocking one
  fails the plan (the virtual layer is not moved) and names the check in SQLMesh's error.

The measuring query records exactly what the dbt target records (decision 0501: counts as
integers, values cast to text, exact decimal bounds, gaps as exact integers), with the same
descriptors, so the verdict and the sentences come from one place, ``assay.checks.recorded``.
``on_failure: keep`` is refused by validation for this target (decision 0213).
"""

from __future__ import annotations

import json
import re
from typing import Any

from sqlglot import exp

from ...checks.check_dialect import read_for, replace_own_table
from ...checks.declared import DeclaredCheck
from ...identifiers import unused_marker
from ...ir.model import Entity, Project
from ...privacy import holds_private
from ...lower.check_rows import sql_check_redaction
from ...lower.declared_checks import failing_rows_query, measuring_query, redacted_columns
from ...lower.history import HistoryRelations
from . import jinja_safe, naming
from ...lower.outputs import kept_query
from .spelling import SqlmeshSpelling

RESULTS_TABLE = "assay_check_results"
INDENT = "  "
SQL_POSITION = 1000  # SQL check files sort after the declared checks, as on dbt
THIS = "@this_model"


def results_relation(project: Project) -> str:
    return f"{project.schema('meta')}.{RESULTS_TABLE}"


def declared_query(entity: Entity, low: SqlmeshSpelling, relation: str = THIS,
                   staged: str | None = None, history: HistoryRelations | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The one measuring query of an entity's declared checks over ``relation`` (``@this_model``
    unless told), and the descriptors naming the columns of its row each check reads. Rate
    thresholds count ``staged``: the staged model by name (the recorder resolves it to the table
    this plan wrote), or ``@this_model`` in the staged model's own recorder. Change limits read
    the mart and the results table by name (``history``); the recorder reads a missing one as
    empty (decision 0981)."""
    return measuring_query(entity, low, relation, staged, history)


def _sql_against_this(check, schema: str, dialect: str, this: str = THIS) -> str:
    """The check file's query with its own table replaced by ``this`` (``@this_model``, the table
    SQLMesh has just written, unless told), keeping the alias it was read under; other tables are
    read as they are."""
    placeholder = unused_marker("assay_this_model_placeholder", check.sql)
    tree = read_for(check.sql, dialect)
    replace_own_table(tree, check, schema, placeholder, exp.to_identifier(check.table, quoted=True))
    return jinja_safe.tree(tree).sql(dialect=dialect).replace(placeholder, this)


def _audit_name(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^a-z0-9_]", "_", name.lower())


def sql_check_audit_name(check) -> str:
    return _audit_name("assay_sql_check__", check.check_name)


def declared_audit_name(check: DeclaredCheck) -> str:
    return _audit_name("assay_check__", check.check_id)


def _sorted_sql_checks(entity: Entity) -> list:
    return sorted(entity.sql_checks, key=lambda c: c.name)


def audit_names(entity: Entity) -> list[str]:
    """The inline audits the model lists, in the order they run: declared, then SQL files."""
    return [declared_audit_name(c) for c in entity.declared_checks] + [sql_check_audit_name(c) for c in _sorted_sql_checks(entity)]


def _indent(sql: str, by: str) -> str:
    """`sql` with each line indented, except a line that continues a string literal, a quoted
    name or a comment: indenting it would change the value (a check file's literal holding a
    newline must reach the warehouse verbatim, issue 21)."""
    out, closer, i = [], None, 0
    for line in sql.split("\n"):
        out.append(line if closer else by + line)
        i = 0
        while i < len(line):
            if closer is None:
                if line.startswith("/*", i):
                    closer, i = "*/", i + 2
                    continue
                if line.startswith("--", i):
                    break
                if line[i] in "'\"":
                    closer = line[i]
            elif line.startswith(closer, i):
                if closer in "'\"" and line.startswith(closer * 2, i):  # a doubled quote stays inside
                    i += 2
                    continue
                i += len(closer)
                closer = None
                continue
            i += 1
    return "\n".join(out)


def post_statements(entity: Entity, project: Project, low: SqlmeshSpelling, this: str = THIS,
                    only_if: str | None = None) -> list[str]:
    """The recording post-statements of an entity's model, or none: they measure ``this`` (the
    model just written unless told) and, with ``only_if`` (a query), record only when it
    returns a row."""
    results = low.string(results_relation(project))
    table = low.string(entity.name)
    condition = [f"{INDENT}only_if := (", _indent(only_if, INDENT * 2), f"{INDENT}),"] if only_if else []
    hidden = redacted_columns(entity)
    redact = [f"{INDENT}redact := {low.string(json.dumps(hidden))},"] if hidden else []
    out = []
    if entity.declared_checks:
        # a subquery in FROM needs an alias on PostgreSQL (a check file's query keeps its own)
        sql, descriptors = declared_query(entity, low, this if this == THIS else f"{this} AS assay_kept",
                                          None if this == THIS else THIS,
                                          HistoryRelations(mart=naming.mart(project), results=results_relation(project)))
        if this == THIS:  # the rows a failing check found, kept by the recorder (decision 0532)
            for check, descriptor in zip(entity.declared_checks, descriptors):
                rows = failing_rows_query(check, entity, low, THIS)
                if rows is not None:
                    descriptor["rows_sql"] = rows
        # 000's budgets of the row pass (assay.yml `checks`), applied by the recorder (0214).
        scan_bytes, time_seconds = project.budget_of(entity.name)
        out.append(
            "\n".join(
                [
                    "@assay_record_declared_checks(",
                    f"{INDENT}table_name := {table},",
                    f"{INDENT}results := {results},",
                    f"{INDENT}checks := {low.string(json.dumps(descriptors, sort_keys=True))},",
                    f"{INDENT}scan_budget := {scan_bytes},",
                    f"{INDENT}time_budget := {time_seconds},",
                    *condition,
                    *redact,
                    f"{INDENT}measure := (",
                    _indent(sql, INDENT * 2),
                    f"{INDENT})",
                    ")",
                ]
            )
        )
    for n, check in enumerate(_sorted_sql_checks(entity), 1):
        sql = _sql_against_this(check, project.schema("silver"), low.dialect, this)
        # What it returned is kept without the output columns its lineage ties to a pii value,
        # and not at all when its output cannot be traced (decision 0914).
        check_hidden = sql_check_redaction(check, project, entity)
        rows = ([f"{INDENT}keep_found := FALSE,"] if check_hidden is None else
                [f"{INDENT}redact := {low.string(json.dumps(check_hidden))},"] if check_hidden else [])
        # an engine's error may quote a pii value the check read: recorded without quoted runs
        rows += [f"{INDENT}private := TRUE,"] if holds_private(project) else []
        out.append(
            "\n".join(
                [
                    "@assay_record_sql_check(",
                    f"{INDENT}table_name := {table},",
                    f"{INDENT}results := {results},",
                    f"{INDENT}check_name := {low.string(check.name)},",
                    f"{INDENT}on_failure := {low.string(check.on_failure)},",
                    f"{INDENT}position := {SQL_POSITION + n},",
                    *condition,
                    *rows,
                    f"{INDENT}query := (",
                    _indent(sql, INDENT * 2),
                    f"{INDENT})",
                    ")",
                ]
            )
        )
    return out


def _audit(name: str, blocking: bool, dialect: str, body: str) -> str:
    props = [f"name {name}", f"dialect {dialect}", f"blocking {'TRUE' if blocking else 'FALSE'}"]
    return "AUDIT (\n  " + ",\n  ".join(props) + "\n);\n" + f"SELECT * FROM ({body}) AS assay_violations"


def inline_audits(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """One AUDIT block per check, reading its recorded result of this run."""
    results = low.string(results_relation(project))
    table = low.string(entity.name)
    out = []
    for c in entity.declared_checks:
        body = f"@assay_check_failures({results}, {table}, {low.string(c.check_id)})"
        out.append(_audit(declared_audit_name(c), c.enforcement == "required", low.dialect, body))
    for c in _sorted_sql_checks(entity):
        body = f"@assay_check_failures({results}, {table}, {low.string(c.name)}, {low.string(c.on_failure)})"
        out.append(_audit(sql_check_audit_name(c), c.on_failure == "block", low.dialect, body))
    return out


def failed_rules_recorder(entity: Entity, project: Project, low: SqlmeshSpelling, rules: list[str],
                          flags_column: str) -> str:
    """The staged model's recorder of a build its `fail` rule audits are about to stop: it reads
    ``flags_column`` of ``@this_model`` for ``rules`` (those audits' rules, in their order) and
    records nothing when none fired (decision 0932)."""
    return "\n".join([
        "@assay_record_failed_rules(",
        f"{INDENT}table_name := {low.string(entity.name)},",
        f"{INDENT}results := {low.string(results_relation(project))},",
        f"{INDENT}rules := (" + ", ".join(low.string(r) for r in rules) + "),",
        f"{INDENT}flags_column := {flags_column}",
        ")",
    ])


def ingestion_recorders(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """The staged model's recorders of a build its ingestion-metadata audits are about to stop, one
    per bronze relation the entity reads whose metadata is audited, with the audit's own arguments
    (decision 0935); first, as those audits run before the fail rules'."""
    from ...lower.audits import bronze_audits, ranking_mappings
    from . import naming

    audited = {b.source for b in bronze_audits(project) if b.ingestion_metadata}
    out = []
    for source in sorted({m.source for m in entity.mappings} & audited):
        ranked = ranking_mappings(entity, source)
        lines = ["@assay_record_ingestion_stop(",
                 f"{INDENT}table_name := {low.string(entity.name)},",
                 f"{INDENT}results := {low.string(results_relation(project))},",
                 f"{INDENT}source := {naming.bronze(project, source)}" + ("," if ranked else "")]
        if ranked:
            lines.append(f"{INDENT}ranked_mappings := (" + ", ".join(low.lit(m) for m in ranked) + ")")
        out.append("\n".join([*lines, ")"]))
    return out


def staged_tail(entity: Entity, project: Project, low: SqlmeshSpelling, fail_rules: list[str] = (),
                flags_column: str = "_failed_rules") -> str:
    """What follows the staged model's query. First the recorders of a build its ingestion-metadata
    audits stop (decision 0935). Then, when the staged model audits `fail` rules
    (``fail_rules``, read from ``flags_column``), the recorder of a build those audits stop
    (decision 0932). Then, for an entity without dedupe whose checks the key audit of the staged
    model could stop before the entity records them, the same recorders as the entity's over the
    rows about to be kept, run only when a kept key repeats (decision 0921). The entity's own
    recorders and audits are unchanged: a run the key audit does not stop records there."""
    parts = ingestion_recorders(entity, project, low)
    parts += [failed_rules_recorder(entity, project, low, list(fail_rules), flags_column)] if fail_rules else []
    if not entity.dedupe:
        kept = kept_query(low, entity, THIS).strip()
        this = "(\n" + _indent(kept, INDENT) + "\n)"
        keys = "(" + ", ".join(low.qi(k) for k in entity.key) + ")"
        repeated = f"@assay_key_uniqueness_violations({THIS}, {keys}, TRUE)"
        if entity.declared_checks or entity.sql_checks:
            parts += post_statements(entity, project, low, this, repeated)
        else:
            # no check of its own to record the stop: the key's own recorder (session 44)
            parts.append("\n".join(["@assay_record_key_stop(", f"{INDENT}table_name := {low.string(entity.name)},",
                                     f"{INDENT}results := {low.string(results_relation(project))},",
                                     f"{INDENT}repeated := {repeated}", ")"]))
    return ";\n\n".join(parts) + (";\n" if parts else "")
