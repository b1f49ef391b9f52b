"""Retention: the only code in assay that deletes a row.

Reject rows hold source payloads (`raw`, `key_values`) and therefore personal data, so every entity
that can quarantine declares `quarantine.retention` (reference 001: "quarantine plus a retention
policy: a deletion with a paper trail"). `maintain` executes it: a reject row is deleted once it is
older than its entity's retention, measured

- for an unresolved row from `last_seen` (when the source last delivered it: replay does not move
  it, so a row nobody fixes expires), and
- for a resolved row from `resolved_at` (it is audit history from then on).

An unresolved row whose source row bronze still delivers is kept however old it is (decision
0951): the next build would divert that delivery again and write the same row back (same
`reject_id`, `first_seen`, `raw`), so deleting it would record a deletion that did not last. It
expires at the first maintain after bronze's own retention drops the row; `Expiry.held` counts it.

Every run writes one `REJECTS_EXPIRED` event per entity into `<meta>.assay_events` with the count
and the cut-off, including a count of zero, so an operator can see that maintenance ran. Running it
twice deletes nothing the second time. `dry_run` counts and changes nothing.

The clock is the caller's (`now`, naive UTC, like every timestamp assay writes), so the command is
testable and a scheduler may pass its own logical time.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import Callable, Optional

from .engine_types import TYPE_NAMES
from .ir.model import Entity, Project
from .runtime.relations import writable_relation
from .runtime.sqltext import execute, relation

EVENTS_TABLE = "assay_events"
EXPIRED = "REJECTS_EXPIRED"

# One events table for every state change assay records (retention here; check failures, set-backs
# and kept marks as they are added). Columns are plain text and counts so any engine can hold them.
EVENTS_COLUMNS = (
    ("event_id", "string"),
    ("event_type", "string"),
    ("run_id", "string"),
    ("table_name", "string"),
    ("check_name", "string"),
    ("why", "string"),
    ("row_count", "int"),
    ("cutoff", "timestamp"),
    ("occurred_at", "timestamp"),
)
# The engines `assay maintain` writes to, with their type names from the one table.
_ENGINE_TYPES = {d: TYPE_NAMES[d] for d in ("duckdb", "postgres")}


@dataclass(frozen=True)
class Expiry:
    """What retention did (or, on a dry run, would do) to one entity's reject table."""

    entity: str
    table: str
    retention: str
    cutoff: dt.datetime
    unresolved: int
    resolved: int
    held: int = 0  # unresolved rows past the cut-off kept because bronze still holds their delivery

    @property
    def total(self) -> int:
        return self.unresolved + self.resolved

    def why(self) -> str:
        return (
            f"retention {self.retention}: unresolved rows last seen before {self.cutoff.isoformat(sep=' ')} "
            f"whose delivery bronze no longer holds, and resolved rows resolved before it; "
            f"{self.held} unresolved {'row' if self.held == 1 else 'rows'} past it kept, bronze still holding "
            f"{'its' if self.held == 1 else 'their'} delivery"
        )


def _table_exists(cur, dialect: str, schema: str, table: str) -> bool:
    execute(cur, dialect, "select count(*) from information_schema.tables where table_schema = ? and table_name = ?",
            (schema, table))
    return cur.fetchone()[0] > 0


def ensure_events_table(cur, dialect: str, meta_schema: str) -> str:
    """Create `<meta>.assay_events` when it is missing; return its quoted name."""
    types = _ENGINE_TYPES[dialect]
    execute(cur, dialect, f"create schema if not exists {relation(dialect, meta_schema)}")
    events = relation(dialect, meta_schema, EVENTS_TABLE)
    cols = ", ".join(f"{name} {types[t]}" for name, t in EVENTS_COLUMNS)
    execute(cur, dialect, f"create table if not exists {events} ({cols})")
    return events


def bronze_holds(project: Project, entity: Entity, exists: Callable[[str, str], bool],
                 rel: Callable[[str, str], str], text: str) -> tuple[str, tuple[str, ...]]:
    """SQL true for a reject row `r` whose source row bronze still delivers (any `_load_id`: the
    latest delivery of it, a `__replay__` one included, is what the next build judges, and diverts
    into this same row when it fails again), and the relation names it binds, in order.

    The one test of decision 0951, for retention and for the report that says what retention will
    do: `exists(schema, table)` and `rel(schema, table)` (quoted) are the caller's, `text` the
    engine's name of the text type."""
    held, names = [], []
    for source in sorted({m.source for m in entity.mappings}):
        if not exists(project.schema("bronze"), source):
            continue  # a bronze relation dropped whole holds nothing
        held.append(f"(r.source_relation = ? and exists (select 1 from {rel(project.schema('bronze'), source)} as b where "
                    f"cast(b._source_row_id as {text}) = r._source_row_id))")
        names.append(source)
    return " or ".join(held) or "1 = 0", tuple(names)


def _in_bronze(cur, dialect: str, project: Project, entity: Entity) -> tuple[str, tuple[str, ...]]:
    return bronze_holds(project, entity, lambda schema, table: _table_exists(cur, dialect, schema, table),
                        lambda schema, table: relation(dialect, schema, table), _ENGINE_TYPES[dialect]["string"])


def _expire_one(conn, cur, dialect: str, project: Project, entity: Entity, now: dt.datetime, dry_run: bool) -> Optional[Expiry]:
    silver = project.schema("silver")
    name = f"{entity.name}__reject"
    if entity.retention is None or not _table_exists(cur, dialect, silver, name):
        return None
    cutoff = now - entity.retention.timedelta
    # dbt: the table itself. SQLMesh: the physical table behind the environment's view (the reject
    # model is INCREMENTAL_BY_UNIQUE_KEY and forward-only, so that one table holds its history
    # across versions; decision 0700). Counting reads the same table the delete writes.
    table = writable_relation(conn, dialect, silver, name)
    in_bronze, sources = _in_bronze(cur, dialect, project, entity)
    past = "r.resolved_at is null and r.last_seen < ?"
    unresolved_where = f"{past} and not ({in_bronze})"
    resolved_where = "r.resolved_at is not null and r.resolved_at < ?"

    def count(where: str, params: tuple) -> int:
        return int(execute(cur, dialect, f"select count(*) from {table} as r where {where}", params).fetchone()[0])

    unresolved = count(unresolved_where, (cutoff, *sources))
    resolved = count(resolved_where, (cutoff,))
    held = count(f"{past} and ({in_bronze})", (cutoff, *sources))
    if not dry_run and unresolved + resolved:
        execute(cur, dialect, f"delete from {table} as r where ({unresolved_where}) or ({resolved_where})",
                (cutoff, *sources, cutoff))
    return Expiry(entity.name, f"{silver}.{name}", entity.retention, cutoff, unresolved, resolved, held)


def maintain(conn, dialect: str, project: Project, now: dt.datetime, dry_run: bool = False,
             entities: Optional[list[str]] = None) -> list[Expiry]:
    """Apply every entity's retention to its reject table; record one event per entity.

    `now` is naive UTC. Entities without a reject table in the warehouse (never built) are skipped.
    Returns what was (or would be) deleted, by entity name.
    """
    if dialect not in _ENGINE_TYPES:
        raise ValueError(f"assay maintain talks to DuckDB and Postgres warehouses, not {dialect}")
    cur = conn.cursor()
    chosen = [e for e in project.entities if entities is None or e.name in entities]
    done: list[Expiry] = []
    for entity in chosen:
        expiry = _expire_one(conn, cur, dialect, project, entity, now, dry_run)
        if expiry is not None:
            done.append(expiry)
    if not dry_run and done:
        events = ensure_events_table(cur, dialect, project.schema("meta"))
        run_id = str(uuid.uuid4())
        marks = ", ".join(["?"] * len(EVENTS_COLUMNS))
        names = ", ".join(n for n, _ in EVENTS_COLUMNS)
        for e in done:
            execute(
                cur, dialect, f"insert into {events} ({names}) values ({marks})",
                (str(uuid.uuid4()), EXPIRED, run_id, e.table, None, e.why(), e.total, e.cutoff, now),
            )
    return done


def unclaimed_rejects(conn, dialect: str, project: Project) -> list[str]:
    """The reject tables in the silver schema that no entity of `project` quarantines into (an
    entity renamed or removed since the build, or its quarantine dropped), as `schema.table`.

    `maintain` applies retention by the spec, so it cannot age these; it names them rather than
    pass over rows the operator may believe are expiring."""
    silver = project.schema("silver")
    claimed = {f"{e.name}__reject" for e in project.entities if e.has_reject}
    cur = conn.cursor()
    execute(cur, dialect, "select table_name from information_schema.tables where table_schema = ?", (silver,))
    return sorted(f"{silver}.{name}" for (name,) in cur.fetchall()
                  if str(name).endswith("__reject") and name not in claimed)
