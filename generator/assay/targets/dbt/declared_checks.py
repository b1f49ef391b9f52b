"""Declared table checks (document 000) of an entity, as one measuring query per table.

The generator writes, beside an entity's audits, a macro
``default__assay_declared__<entity>(candidate)`` returning::

    {'table': '<entity>', 'results_schema': '<meta schema>',
     'sql': <one SELECT measuring every declared check on the candidate>,
     'checks': [<descriptor>, ...]}

The ``assay_entity`` materialization runs the SELECT once (never one query per check), reads
each check's numbers out of its one row through the descriptor, decides pass/fail in Jinja,
records every result in ``<meta>.assay_check_results`` and sets the table back when a
``required`` check failed (docs/checks.md, docs/decisions/0500-0504).

Every column of the measuring row is either a count (an integer) or a value cast to text in
SQL, so nothing goes through a float and ``assay checks`` can render 000's exact sentences
from the recorded text later. Comparisons against ``value_range`` bounds happen in SQL
against a decimal literal of the bound's own precision, so they are exact too.
"""

from __future__ import annotations

from typing import Any, Optional

from ...checks.declared import DeclaredCheck
from ...checks.frames import FRAMED_KINDS, failure_frames
from ...ir.model import Entity, Project
from ...lower.declared_checks import INCREASE_KINDS
from ...lower.declared_checks import measuring_query
from ...lower.declared_checks import failing_rows_query, proven_by_key_audit, redacted_columns
from ...lower.history import HistoryRelations
from ...privacy import HIDDEN
from .spelling import DbtSpelling, jstr, qi
from .naming import audits_macro_name

RESULTS_TABLE = "assay_check_results"  # also the name of the node that creates it
INDENT = "    "
CANDIDATE = "{{ candidate }}"
SP = DbtSpelling()


def declared_macro_name(entity: Entity) -> str:
    """Derived from the audits macro name, so the materialization finds it from the one
    ``assay_audits`` config value the entity model already carries."""
    return audits_macro_name(entity).replace("assay_audits__", "assay_declared__")


def jinja_literal(value: Any) -> str:
    """A Python value as a Jinja literal (JSON is not one: Jinja spells null ``none``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return jstr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(jinja_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{jstr(k)}: {jinja_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Jinja literal for {type(value).__name__}")


def with_sentences(desc: dict[str, Any]) -> dict[str, Any]:
    """The descriptor with, for a check whose failure sentence holds measured values, its frames
    (assay.checks.frames: the sentences `assay checks` says, slots where the values go) and the
    pii marker a value may read as; the package fills them for its error (decision 0945)."""
    if desc["kind"] not in FRAMED_KINDS:
        return desc
    frames = failure_frames(desc["kind"], desc["columns"], desc["bounds"], domain=desc.get("domain"),
                            orderable=desc.get("orderable", True))
    return {**desc, "sentences": {"frames": frames, "hidden": HIDDEN}}


def rows_query(check: DeclaredCheck, entity: Entity) -> Optional[str]:
    """The rows of the candidate a failing check found (``lower``'s query over ``candidate``)."""
    return failing_rows_query(check, entity, SP, CANDIDATE)


def capture_macro_name(entity: Entity) -> str:
    return audits_macro_name(entity).replace("assay_audits__", "assay_capture__")


def capture_macro(entity: Entity) -> str:
    """What ``assay._capture_check_rows`` keeps out of an entity's captured rows; empty text for
    an entity that redacts nothing and has no `pii` field (the package then keeps every column)."""
    if not redacted_columns(entity) or not (entity.declared_checks or entity.sql_checks):
        return ""
    return "\n".join([
        f"{{% macro default__{capture_macro_name(entity)}() %}}",
        "  {{ return({'redact': " + jinja_literal(redacted_columns(entity)) + "}) }}",
        "{% endmacro %}",
        "",
    ])


def declared_query(entity: Entity, key_proven: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The one measuring query of an entity's declared checks (Jinja SQL over ``candidate``)
    and the descriptors that say which column of its row each check reads; ``key_proven``: the
    form the materialization runs once the entity's key audit has passed (decision 1010)."""
    return measuring_query(entity, SP, CANDIDATE, history=HISTORY, key_proven=key_proven)


def _guard(which: str, real: str, empty: str) -> str:
    # The relations are looked up when the materialization renders the macro (decision 0981):
    # the mart does not exist before the first build, and a ref would close a cycle.
    return "{% if assay_history['" + which + "'] is not none %}" + real + "{% else %}" + empty + "{% endif %}"


#: The entity's history, read without a ref: the mart is built after the entity (it depends on
#: it), so during the measuring query it holds only earlier runs. The macro sets assay_history.
HISTORY = HistoryRelations(mart="{{ assay_history['mart'] }}", results="{{ assay_history['results'] }}",
                           events="{{ assay_history['events'] }}", guard=_guard)


def declared_macro(entity: Entity, project: Project) -> str:
    """The macro the materialization calls; empty text for an entity with no declared checks."""
    if not entity.declared_checks:
        return ""
    sql, descriptors = declared_query(entity)
    lines = [
        f"{{% macro default__{declared_macro_name(entity)}(candidate) %}}",
        "  {% set checks = [] %}",
    ]
    for d in descriptors:
        lines.append(f"  {{% do checks.append({jinja_literal(with_sentences(d))}) %}}")
    for n, check in enumerate(entity.declared_checks):
        rows = rows_query(check, entity)
        if rows is not None:
            # The violating rows, captured only when the check fails (assay check rows).
            lines += [f"  {{% set rows_sql %}}{rows}{{% endset %}}",
                      f"  {{% do checks[{n}].update({{'rows_sql': rows_sql}}) %}}"]
    scan_bytes, time_seconds = project.budget_of(entity.name)
    if any(c.kind in INCREASE_KINDS or c.kind == "anomaly" for c in entity.declared_checks):
        lines.append("  {% set assay_history = assay.history_relations(" + jstr(project.schema("meta")) + ") %}")
    lines += ["  {% set sql %}", sql, "  {% endset %}"]
    proven = ""
    if proven_by_key_audit(entity):
        # Run instead of `sql` only by a materialization whose key audit passed on the candidate.
        lines += ["  {% set key_proven_sql %}", declared_query(entity, key_proven=True)[0], "  {% endset %}"]
        proven = ", 'key_proven_sql': key_proven_sql"
    lines += [
        "  {{ return({'table': "
        + jstr(entity.name)
        + ", 'results_schema': "
        + jstr(project.schema("meta"))
        + f", 'budget': {{'scan_bytes': {scan_bytes}, 'time_seconds': {time_seconds}}}"
        + ", 'sql': sql" + proven + ", 'checks': checks}) }}",
        "{% endmacro %}",
        "",
    ]
    return "\n".join(lines)


def results_model_sql(project: Project, header: str) -> Optional[str]:
    """The ``assay_check_results`` node: an empty incremental model that creates the results
    table in the meta schema. Entities with declared checks depend on it, so the table exists
    before they run in parallel (a create race fails the run on DuckDB); ``full_refresh=false``
    keeps the history of results through ``--full-refresh``."""
    if not any(e.declared_checks or e.sql_checks for e in project.entities) and not (
            any(t.declared_checks for t in project.tables) or project.sql_checks):  # tables assay only reads
        return None
    return "\n".join(
        [
            header,
            "{{ config(materialized='incremental', schema="
            + jstr(project.schema("meta"))
            + ", full_refresh=false, on_schema_change='ignore', tags=['assay'],",
            "    post_hook=\"create table if not exists {{ this.incorporate(path={'identifier': 'assay_check_rows'}) }} as "
            "{{ assay.check_rows_select() }}\") }}",
            "-- Rows are inserted by the assay_entity materialization; this node only creates the table,",
            "-- and (post-hook) the table of the rows failing checks found (assay check rows).",
            "{{ assay.check_results_select() }}",
            "",
        ]
    )
