"""SQL check files (document 002) of an entity, run on its candidate before publishing.

Each check is a SELECT returning the rows that are wrong; its count is
`SELECT COUNT(*) FROM (<check>)`: zero is `passed`, more is `failed` (block, keep) or
`warned` (warn). The generator rewrites the check's reference to its own table into the
candidate relation (with sqlglot, never by text search), so the check judges the data about
to be published. `block` failures set the table back like the generated audits.
"""

from __future__ import annotations

import re

from sqlglot import exp

from ...checks.check_dialect import DBT_SPELLINGS, read_for, replace_own_table
from ...identifiers import unused_marker
from ...ir.model import Entity, Project
from ...lower.check_rows import sql_check_redaction
from ...privacy import holds_private
from .spelling import escaped_literals, jstr
from .naming import audits_macro_name

# The candidate relation and the alias that keeps `<table>.<column>` references of the check valid
# once its table is the candidate (the table's name, quoted by the adapter at run time: backticks
# on Spark, where a double-quoted name is a string) are put in as markers the check's own text
# does not hold (`unused_marker`), then cut at.
PLACEHOLDER = "assay_candidate_placeholder"
ALIAS_PLACEHOLDER = "assay_own_alias_placeholder"


def sqlchecks_macro_name(entity: Entity) -> str:
    return audits_macro_name(entity).replace("assay_audits__", "assay_sqlchecks__")


# The spellings a check's SQL is written back in, each read with its own engine's grammar
# (checks/check_dialect.py): DuckDB's for DuckDB, PostgreSQL's for every other adapter. One text
# when they agree (decision 0964).
SPELLINGS = DBT_SPELLINGS


def _against_candidate(check, schema: str) -> tuple[dict[str, str], str, str, dict[str, str]]:
    """The check's SQL, by spelling (`SPELLINGS`), with its own table replaced by a marker the
    macro fills in, the markers of the candidate and of its alias, and the literals holding a
    backslash, by their markers."""
    candidate, own_alias = (unused_marker(m, check.sql) for m in (PLACEHOLDER, ALIAS_PLACEHOLDER))
    spelled, escaped = {}, {}
    for dialect in SPELLINGS:
        tree = read_for(check.sql, dialect)
        marked = tree.copy()
        marks = escaped_literals(marked)
        if all(escaped.get(k, v) == v for k, v in marks.items()):
            tree = marked  # the same markers as the other spelling: one text where they agree
        else:
            marks = escaped_literals(tree, f"assay_escaped_literal_{dialect}")
        escaped.update(marks)
        replace_own_table(tree, check, schema, candidate, exp.to_identifier(own_alias))
        spelled[dialect] = tree.sql(dialect=dialect)
    return spelled, candidate, own_alias, escaped


def _jinja_sql(sql: str, table: str, candidate: str = PLACEHOLDER, own_alias: str = ALIAS_PLACEHOLDER,
               escaped: dict[str, str] | None = None) -> str:
    """`"select ... from " ~ candidate ~ " as " ~ adapter.quote("t") ~ " where ..."` as a Jinja
    expression; a literal holding a backslash is `assay.string_literal("...")`, escaped for the engine."""
    calls = {name: "assay.string_literal(" + jstr(value) + ")" for name, value in (escaped or {}).items()}
    cut = re.compile("|".join(re.escape(m) for m in [candidate, own_alias, *calls]))
    parts, at = [], 0
    for m in cut.finditer(sql):
        parts += [jstr(sql[at:m.start()]), {candidate: "candidate", own_alias: "adapter.quote(" + jstr(table) + ")"}.get(m.group(), calls.get(m.group()))]
        at = m.end()
    return " ~ ".join(parts + [jstr(sql[at:])])


def _rows_items(check, project: Project) -> str:
    """What the package keeps of the rows the check returned (decision 0914): ``'redact'``, the
    output columns that may carry a `pii` value (traced by lineage, ``lower.check_rows``), or
    ``'keep_rows': false`` when its output cannot be traced. The entity's own redacted columns
    come from its ``assay_capture__`` macro, as for declared checks."""
    redact = sql_check_redaction(check, project)
    if redact is None:
        return ", 'keep_rows': false"
    return (", 'redact': [" + ", ".join(jstr(c) for c in redact) + "]") if redact else ""


def sqlchecks_macro(entity: Entity, project: Project) -> str:
    """The macro the materialization calls: one entry per SQL check file of the entity."""
    if not entity.sql_checks:
        return ""
    lines = [f"{{% macro default__{sqlchecks_macro_name(entity)}(candidate) %}}", "  {% set checks = [] %}"]
    for check in sorted(entity.sql_checks, key=lambda c: c.name):
        spelled, candidate, own_alias, escaped = _against_candidate(check, project.schema("silver"))
        duckdb_sql, other_sql = (_jinja_sql(spelled[d], check.table, candidate, own_alias, escaped) for d in SPELLINGS)
        # the check as its engine reads it: PostgreSQL's spelling of DuckDB-only syntax is not DuckDB's
        sql = other_sql if duckdb_sql == other_sql else f"(({duckdb_sql}) if target.type == 'duckdb' else ({other_sql}))"
        lines.append(
            "  {% do checks.append({'name': " + jstr(check.name) + ", 'on_failure': " + jstr(check.on_failure)
            + _rows_items(check, project) + (", 'private': true" if holds_private(project) else "") + ", 'sql': " + sql + "}) %}"
        )
    lines += ["  {{ return(checks) }}", "{% endmacro %}", ""]
    return "\n".join(lines)
