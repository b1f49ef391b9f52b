"""Keep on the dbt target (reference 002, "Keeping a table"; decisions 0510-0513).

The package's `assay_entity` materialization marks a table kept (an event in
``<meta>.assay_events``) when a keep check fails, and clears the mark when a build is published.
This module writes what the generator owns of that:

- ``models/assay/assay_events.sql``: an empty incremental model that creates the events table
  before the entities that write into it run in parallel (as ``assay_check_results`` does for
  results: a create race fails the run on DuckDB).
- the reader gate: every generated node that reads an entity table calls ``assay.kept_gate`` before
  it reads, which refuses it while the table is kept and, first, runs the table's check task. The
  readers are a child's staged model (its referential probes read the parent), a type-2
  snapshot (it versions ``<entity>__current``) and the coverage and reconcile tests. The mart
  reads only staged tables, which hold no kept data, so it is no reader.
- a type-2 entity kept by a keep check is published whole (decision 1127): its history is no
  reader of a mark its own build set in this run (the gate lets it version the kept rows), and
  its post-hook, ``assay.kept_history``, fails the history's node with TABLE_KEPT once the
  versions are committed, so that nothing reads the entity in this run; ``__current`` names the
  history (``assay_history``) and does not fail itself when that node runs in the same invocation.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from .naming import audited_name, current_name, model_name
from .spelling import jstr

EVENTS_MODEL = "assay_events"


def has_checks(entity: Entity) -> bool:
    """Whether the entity has checks (declared or SQL files) in this project version."""
    return bool(entity.declared_checks or entity.sql_checks)


def events_model_sql(project: Project, header: str) -> str | None:
    """The ``assay_events`` node, when any entity has checks; ``full_refresh=false`` keeps the trail."""
    if not any(has_checks(e) for e in project.entities) and not (
            any(t.declared_checks for t in project.tables) or project.sql_checks):  # tables assay only reads (0520)
        return None
    return "\n".join(
        [
            header,
            "{{ config(materialized='incremental', schema=" + jstr(project.schema("meta"))
            + ", full_refresh=false, on_schema_change='ignore', tags=['assay']) }}",
            "-- Rows are appended by the assay_entity materialization and assay.kept_gate; this node only",
            "-- creates the table (the same columns `assay maintain` creates it with).",
            "{{ assay.events_select() }}",
            "",
        ]
    )


def kept_relation(entity: Entity, read_through: str) -> str:
    """A Jinja expression for the relation that holds an entity's checked data, given the ref a reader
    already holds: the entity table itself, or a type-2 entity's ``__current`` beside its snapshot."""
    if entity.scd == "type2" and read_through == model_name(entity):
        return f"ref({jstr(model_name(entity))}).incorporate(path={{'identifier': {jstr(current_name(entity))}}})"
    return f"ref({jstr(read_through)})"


def gate_call(entries: list[tuple[Entity, str]], project: Project, history: bool = False) -> str:
    """``assay.kept_gate([...], meta)`` for the entities read (each with the ref the reader holds);
    ``history``: the reader is the entity's own type-2 history (decision 1127)."""
    own = ", 'history': true" if history else ""
    items = ", ".join("{'table': " + jstr(e.name) + ", 'relation': " + kept_relation(e, ref) + own + "}"
                      for e, ref in entries)
    return "assay.kept_gate([" + items + "], " + jstr(project.schema("meta")) + ")"


def parents_read(entity: Entity, project: Project) -> list[Entity]:
    """The entities a staged model reads through its referential probes, once each, sorted."""
    names = sorted({r.param("parent") for r in entity.rules_of_kind("referential")})
    return [project.entity(n) for n in names]


def with_gate(text: str, entries: list[tuple[Entity, str]], project: Project) -> str:
    """A model's file text with a second config() block whose pre-hook is the kept gate."""
    if not entries:
        return text
    hook = "{{ config(pre_hook=" + jstr("{{ " + gate_call(entries, project) + " }}") + ") }}"
    lines = text.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("{{ config(")), 0)
    return "\n".join(lines[: at + 1] + [hook] + lines[at + 1:])


def staged_with_gate(text: str, entity: Entity, project: Project) -> str:
    """The staged model refuses to probe a kept parent."""
    return with_gate(text, [(p, model_name(p)) for p in parents_read(entity, project)], project)


def keeps_history(entity: Entity) -> bool:
    """Whether a keep check can mark this type-2 entity, so that its history carries the kept failure."""
    return entity.scd == "type2" and any(c.on_failure == "keep" for c in entity.sql_checks)


def snapshot_gate(entity: Entity, project: Project) -> str:
    """The pre-hook (a Jinja string literal) of a type-2 snapshot: it versions the kept ``__current``
    table; a mark set by this run's build of the entity is its own and lets it go on (decision 1127)."""
    return jstr("{{ " + gate_call([(entity, current_name(entity))], project, history=keeps_history(entity)) + " }}")


def history_kept_hook(entity: Entity, project: Project) -> str:
    """The post-hook (a Jinja string literal) of a type-2 history whose entity a keep check can mark:
    after the versions are written it commits them and fails the node with TABLE_KEPT when this run
    kept the entity (decision 1127)."""
    return jstr("{{ assay.kept_history(" + jstr(entity.name) + ", " + kept_relation(entity, current_name(entity))
                + ", " + jstr(project.schema("meta")) + ") }}")


def test_gate(project: Project, *entities: Entity) -> dict:
    """The ``assay_kept`` argument of a coverage or reconcile test: [entity, the model it reads]."""
    tables = []
    for e in entities:
        pair = [e.name, audited_name(e)]
        if pair not in tables:
            tables.append(pair)
    return {"meta": project.schema("meta"), "tables": tables}
