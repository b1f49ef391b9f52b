"""Checks of tables assay only reads (``tables_version: 1``) on the dbt target (decision 0520).

A table declared in a tables document is either a bronze relation (schema ``schemas.bronze``
of ``assay.yml``: a dbt source ``source('bronze', <table>)``) or a model of the user's own dbt
project (any other schema: ``ref(<table>)``, decision 0521). For each such table with declared
checks (000) or SQL check files (002) the generator writes:

- ``models/assay/checks/assay_checks__<schema>__<table>.sql``: the *check task*, a node
  materialized by the package's ``assay_check_task``. It reads the table (so dbt orders it after
  a user model), runs every check on the real relation, records each result in
  ``<meta>.assay_check_results`` under dbt's ``invocation_id`` and fails when a blocking check
  (``required``, ``block``, or ``keep``: on a table assay only reads, keep fails the task and
  sets no mark) failed. It writes nothing and sets nothing back: assay did not write the table.
- ``macros/assay/table_checks/<schema>__<table>.sql``: the macros the task (or, when the user
  opts in, the ``assay_entity`` materialization on the user's own model) finds by name:
  ``assay_audits__<base>`` (no generated audits), ``assay_declared__<base>`` (the one measuring
  query of :mod:`.declared_checks`), ``assay_sqlchecks__<base>`` (:mod:`.sql_checks`),
  ``assay_checked__<base>`` (the relation the task checks) and, for a bronze relation whose
  readers redact columns, ``assay_capture__<base>`` (kept out of the rows ``assay check rows`` keeps).

Every staged model that extracts from a checked bronze relation depends on its check task, so a
failing check stops the readers in that run (dbt skips them).

The columns of a table assay only reads have no declared types, so the measuring query cannot be
fixed at generation time. :mod:`assay.lower.read_only_checks` decides what each check measures for
each runtime type class; this module writes those variants as Jinja branches on the type the
package reads from the relation (``assay.relation_assay_types``), decision 0522. One query per
table still measures every check.
"""

from __future__ import annotations

from typing import Any

from ...ir.model import Entity, Project, TableDecl
from .kept import EVENTS_MODEL
from ...lower.read_only_checks import measuring_variants
from .declared_checks import CANDIDATE, RESULTS_TABLE, SP, jinja_literal, with_sentences
from .naming import audits_macro_name
from .spelling import jstr, qi
from .sql_checks import sqlchecks_macro

CHECK_TASK_PREFIX = "assay_checks__"
CHECKS_MODELS_DIR = "checks"
INDENT = "    "


def split_name(table: TableDecl) -> tuple[str, str]:
    schema, _, name = table.name.partition(".")
    return schema, name


def base_name(table: TableDecl) -> str:
    """``<schema>__<table>``: the suffix of the task node and of its macros."""
    schema, name = split_name(table)
    return f"{schema}__{name}"


def check_task_name(table: TableDecl) -> str:
    return CHECK_TASK_PREFIX + base_name(table)


def audits_name(table: TableDecl) -> str:
    """The ``assay_audits`` config value: the task and ``assay_entity`` derive every other macro name from it."""
    return audits_macro_name(_Named(base_name(table)))


def is_bronze(table: TableDecl, project: Project) -> bool:
    return split_name(table)[0] == project.schema("bronze")


def relation_call(table: TableDecl, project: Project) -> str:
    """The Jinja expression of the relation: a bronze source, or the user's own model."""
    schema, name = split_name(table)
    if is_bronze(table, project):
        return f"source('bronze', {jstr(name)})"
    return f"ref({jstr(name)})"


def sql_checks_of(table: TableDecl, project: Project) -> tuple:
    schema, name = split_name(table)
    return tuple(sorted((c for c in project.sql_checks if c.namespace == schema and c.table == name), key=lambda c: c.name))


def checked_tables(project: Project) -> list[TableDecl]:
    """The declared tables with at least one check of either document, sorted by name."""
    return [t for t in project.tables if t.declared_checks or sql_checks_of(t, project)]


def checked_bronze_sources(project: Project) -> list[str]:
    """Bronze relations with checks, by source table name (``sources.yml`` must declare them)."""
    return sorted(split_name(t)[1] for t in checked_tables(project) if is_bronze(t, project))


def bronze_check_tasks(entity: Entity, project: Project) -> list[tuple[str, str]]:
    """Sorted ``(table, check task node)`` of the checked bronze relations an entity extracts from:
    its staged model waits on each, so a failing check stops the entity in that run."""
    by_source = {split_name(t)[1]: t for t in checked_tables(project) if is_bronze(t, project)}
    return sorted({(by_source[m.source].name, check_task_name(by_source[m.source]))
                   for m in entity.mappings if m.source in by_source})


def reader_depends_on(entity: Entity, project: Project) -> list[str]:
    """``-- depends_on`` lines that put an entity's staged model after the check tasks of the
    bronze relations it extracts from."""
    return ["-- depends_on: {{ ref(" + jstr(n) + ") }}" for _table, n in bronze_check_tasks(entity, project)]


def with_reader_depends_on(text: str, entity: Entity, project: Project) -> str:
    """A staged model's text with its check-task dependencies after the config block."""
    deps = reader_depends_on(entity, project)
    if not deps:
        return text
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("{{ config(")), 0)
    return "\n".join(lines[: at + 1] + deps + lines[at + 1 :])


def check_task_sql(table: TableDecl, project: Project, header: str) -> str:
    """The check task node of one table."""
    config = (
        "{{ config(materialized='assay_check_task', schema=" + jstr(project.schema("meta"))
        + ", assay_audits=" + jstr(audits_name(table))
        + ", assay_table=" + jstr(table.name)
        + ", assay_meta_schema=" + jstr(project.schema("meta"))
        + ", tags=['assay', 'assay_check_task']) }}"
    )
    # A Jinja comment: a `{{ config(...) }}` in a SQL comment would still be rendered.
    own = "" if is_bronze(table, project) else (
        "{# To check this model before it is published instead (write-audit-publish), give it the config\n"
        "   materialized='assay_entity', assay_audits=" + jstr(audits_name(table))
        + ", assay_meta_schema=" + jstr(project.schema("meta")) + "\n"
        "   and this task then leaves the checks to it (docs/checks.md). #}\n"
    )
    return "\n".join([
        header,
        config,
        "-- depends_on: {{ ref(" + jstr(RESULTS_TABLE) + ") }}",
        # The events table exists before parallel check tasks append CHECK_FAILED events to it.
        "-- depends_on: {{ ref(" + jstr(EVENTS_MODEL) + ") }}",
        f"-- The checks of {table.name}, a table assay only reads: they run on it as it is, before what",
        "-- assay builds from it; a failed blocking check fails this node and nothing is set back.",
        own + "select * from {{ " + relation_call(table, project) + " }}",
        "",
    ])


class _Named:
    """A stand-in with the attributes the naming helpers of the entity modules read."""

    def __init__(self, name: str, sql_checks: tuple = ()):
        self.name = name
        self.sql_checks = sql_checks


def _append(desc: dict[str, Any]) -> str:
    """Jinja that appends one descriptor (and its rows query, rendered over ``candidate``)."""
    rows = desc["rows_sql"]
    shown = with_sentences({k: v for k, v in desc.items() if k != "rows_sql"})
    line = "  {%- do checks.append(" + jinja_literal(shown) + ") %}"
    if rows is None:
        return line
    return line + "\n  {%- set rows_sql %}" + rows + "{% endset %}\n  {%- do checks[-1].update({'rows_sql': rows_sql}) %}"


def _branches(check, n: int, groups, part) -> list[str]:
    """Jinja lines choosing among the lowered variants' fragments by the column's runtime type."""
    texts = [part(v.query, v.descriptor) for v in groups]
    if all(t == texts[0] for t in texts):
        return [texts[0]] if texts[0] else []
    lines = []
    for i, types in enumerate(v.types for v in groups):
        if i == len(groups) - 1:
            lines.append("{%- else %}")
        else:
            lines.append(("{%- if " if i == 0 else "{%- elif ") + f"assay_t{n} in {jinja_literal(types)} %}}")
        if texts[i]:
            lines.append(texts[i])
    lines.append("{%- endif %}")
    return lines


def declared_table_macro(table: TableDecl, project: Project) -> str:
    """``default__assay_declared__<base>(candidate)`` of a table assay only reads: the same
    contract as an entity's (see :mod:`.declared_checks`), with the query chosen at run time
    by the types of the relation's columns."""
    if not table.declared_checks:
        return ""
    name = audits_name(table).replace("assay_audits__", "assay_declared__")
    hidden = frozenset(redacted_bronze_columns(table, project)) if is_bronze(table, project) else frozenset()
    groups = [measuring_variants(c, n, SP, CANDIDATE, hidden) for n, c in enumerate(table.declared_checks, 1)]
    # A declared column the relation lacks reads as text here; the measuring query then cannot be
    # run, and the package records every check of the table errored with 000's
    # DECLARED_CHECK_UNREADABLE (decision 0531), as for an entity's candidate.
    lines = [
        f"{{% macro default__{name}(candidate) %}}",
        "  {#- Column types as the relation holds them (decision 0522). -#}",
        "  {%- set assay_types = assay.relation_assay_types(candidate) -%}",
    ]
    for n, check in enumerate(table.declared_checks, 1):
        if check.columns:
            lines.append(f"  {{%- set assay_t{n} = assay_types.get({jstr(check.columns[0])}, 'string') %}}")
    lines.append("  {%- set checks = [] -%}")
    for n, check in enumerate(table.declared_checks, 1):
        types = "[" + ", ".join(f"assay_types.get({jstr(c)}, 'string')" for c in check.columns) + "]"
        appended = _branches(check, n, groups[n - 1], lambda q, d: _append(d))
        lines += appended
        lines.append("  {%- do checks[-1].update({'types': " + types + "}) %}")
    # Every part reads the relation itself: a CTE over it would be a copy (benchmarks/checks.py).
    lines += ["  {% set sql %}", "with assay_m as (", f"{INDENT}select", f"{INDENT * 2}count(*) as assay_rows"]
    # A declared column the relation lacks is still named, so every engine refuses the query the
    # same way (the package records it as DECLARED_CHECK_UNREADABLE) instead of measuring a check
    # whose column is gone as if it were text.
    columns = sorted({c for check in table.declared_checks for c in check.columns})
    for i, c in enumerate(columns, 1):
        lines.append(f"{{%- if {jstr(c)} not in assay_types %}}\n{INDENT * 2}, count({qi(c)}) as assay_missing_{i}\n{{%- endif %}}")
    for n, check in enumerate(table.declared_checks, 1):
        lines += _branches(check, n, groups[n - 1], lambda q, d: "\n".join(f"{INDENT * 2}, {item}" for item in q.base_items()[1:]))
    lines += [f"{INDENT}from {CANDIDATE}", ")"]
    for n, check in enumerate(table.declared_checks, 1):
        lines += _branches(check, n, groups[n - 1], lambda q, d: "\n".join(", " + cte for cte in q.ctes))
    lines += ["select", f"{INDENT}m.*"]
    for n, check in enumerate(table.declared_checks, 1):
        lines += _branches(check, n, groups[n - 1], lambda q, d: "\n".join(f"{INDENT}, {item}" for item in q.outer_items()))
    lines.append("from assay_m as m")
    for n, check in enumerate(table.declared_checks, 1):
        lines += _branches(check, n, groups[n - 1], lambda q, d: "\n".join(q.joins))
    # The budget of 000's row pass (decision 0530): the table's own from assay.yml, else the project's.
    budget = project.budget_of(table.name) if hasattr(project, "budget_of") else getattr(project, "check_budget", None)
    budget_item = f", 'budget': {{'scan_bytes': {budget[0]}, 'time_seconds': {budget[1]}}}" if budget else ""
    lines += [
        "  {% endset %}",
        "  {{ return({'table': " + jstr(table.name) + ", 'results_schema': " + jstr(project.schema("meta"))
        + budget_item + ", 'sql': sql, 'checks': checks}) }}",
        "{% endmacro %}",
        "",
    ]
    return "\n".join(lines)


def redacted_bronze_columns(table: TableDecl, project: Project) -> list[str]:
    """The columns of a bronze relation that an entity mapping from it redacts, or reads a `pii` field from."""
    from ...privacy import pii_bronze_columns

    if not is_bronze(table, project):
        return []
    name = split_name(table)[1]
    return sorted({c for e in project.entities if any(m.source == name for m in e.mappings)
                   for c in set(e.redact) | pii_bronze_columns(e)})


def table_checks_macros(table: TableDecl, project: Project, header: str) -> str:
    """The macros file of one table assay only reads."""
    audits = audits_name(table)
    checked = audits.replace("assay_audits__", "assay_checked__")
    lines = [
        header,
        f"{{#- {table.name} is not built by assay: it has no generated audits, only its declared checks and check files. -#}}",
        f"{{% macro default__{audits}(candidate) %}}",
        "  {{ return([]) }}",
        "{% endmacro %}",
        "",
        f"{{#- The relation the check task of {table.name} checks. -#}}",
        f"{{% macro default__{checked}() %}}",
        "  {{ return(" + relation_call(table, project) + ") }}",
        "{% endmacro %}",
        "",
        f"{{#- The name {table.name}'s results and events are recorded under when a model of the project's own",
        "    builds it with assay's write-audit-publish (materialized='assay_entity'). -#}",
        f"{{% macro default__{audits.replace('assay_audits__', 'assay_table_name__')}() %}}",
        "  {{ return(" + jstr(table.name) + ") }}",
        "{% endmacro %}",
        "",
    ]
    redact = redacted_bronze_columns(table, project)
    if redact:
        # Captured failing rows (assay check rows) never copy a column an entity redacts.
        lines += [
            f"{{#- Columns of {table.name} that entities reading it redact: never kept with a check's rows. -#}}",
            f"{{% macro default__{audits.replace('assay_audits__', 'assay_capture__')}() %}}",
            "  {{ return({'redact': " + jinja_literal(redact) + "}) }}",
            "{% endmacro %}",
            "",
        ]
    declared = declared_table_macro(table, project)
    if declared:
        lines += [declared]
    sql_checks = sql_checks_of(table, project)
    if sql_checks:
        lines += [sqlchecks_macro(_Named(base_name(table), sql_checks), project)]
    return "\n".join(lines)


def table_check_files(project: Project, header_of, models_dir: str, macros_dir: str) -> dict[str, str]:
    """Every file of the check tasks: relative path -> text. ``header_of(files, comment)``
    writes the generated-file header."""
    out: dict[str, str] = {}
    for t in checked_tables(project):
        files = [t.loc.file] + [c.path for c in sql_checks_of(t, project)]
        files = [f for f in files if f]
        sql_h = header_of(files, "--")
        jinja_h = "{# " + header_of(files, "").strip() + " #}"
        out[f"{models_dir}/{CHECKS_MODELS_DIR}/{check_task_name(t)}.sql"] = check_task_sql(t, project, sql_h)
        out[f"{macros_dir}/table_checks/{base_name(t)}.sql"] = table_checks_macros(t, project, jinja_h)
    return out
