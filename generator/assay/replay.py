"""Replay: bring quarantined rows back after a spec fix.

Entities are rebuilt from all of bronze, so a reject row whose bronze row is
still there is re-judged by the next build under the current spec and resolved
when it now passes (admitted) or loses its key to a better row (deduped).
What a build cannot re-judge is a reject row whose bronze row has aged out.
Replay re-delivers those rows into bronze from their `raw` payload, with the
original `_source_row_id` and `_ingested_at` and the reserved `_load_id`
`__replay__` (the route reference 001 gives type-2 entities, used here for
every entity), and the next build judges them like any other delivery: merged
by key under the dedupe order, re-stamped if they still fail, never deleted.
`last_seen` does not move, because the delivery keeps its `_ingested_at`.

Replay re-delivers only what could win its key (decision 0920). An entity with
`dedupe:` has an order, and the build applies it to the re-delivered rows, to
bronze's rows and to each other, so every candidate goes back and the build's
dedupe decides. An entity without `dedupe:` has none: two rows of one key stop
the build on the key audit, every build after it too. So replay puts back at
most one row per key there, and none for a key bronze already delivers; the
others stay open, their `failed_rules` re-stamped `(superseded)` (001).

An incremental entity's ledger judges a delivery once: its next build never
judges again a quarantined row still in bronze. So replay re-delivers those
too, unless bronze already holds a replayed delivery of that source row (a
second one would repeat its `_source_row_id` within `__replay__`); the build
takes a replayed delivery as the latest at its instant and never as late
(decision 1100).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Optional

from . import exactjson
from .errors import WarehouseError
from .ir.model import Entity, Project
from .lower.staged import REPLAY_LOAD_ID
from .runtime.relations import writable_relation
from .runtime.sqltext import execute, executemany, relation
from .runtime.warehouse import is_driver_error

# Reference 001's mark of a candidate that lost its key to a better row rather than to a rule.
SUPERSEDED = "(superseded)"
# `failed_rules` holding only the mark, as each engine's reject table stores the list (an array
# on DuckDB and PostgreSQL, bound as a Python list). Spark's reject table is parquet, which takes
# no UPDATE: there the loser is left unmarked (and still not re-delivered), and the report says so.
MARKED_RULES = {"duckdb": [SUPERSEDED], "postgres": [SUPERSEDED]}
#: The engines whose replay writes are one transaction (the operator's connection is in
#: autocommit): a refused row leaves bronze and the reject table as they were. Spark's parquet
#: tables take no transaction; there each insert stands on its own.
TRANSACTIONAL = frozenset({"duckdb", "postgres"})
_FETCH = 10_000  # staged rows read per round trip while looking for the keys bronze holds


@dataclass
class ReplayReport:
    entity: str
    in_bronze: int = 0  # open rejects whose source row bronze still holds
    # of those, on an incremental entity: replayed already and still diverted, so neither replay (a second
    # `__replay__` delivery) nor the next build (the ledger judges a delivery once) judges them (decision 1100)
    needs_full_refresh: int = 0
    redelivered: dict = field(default_factory=dict)  # bronze relation -> rows re-delivered
    unrecoverable: int = 0  # open rejects without a raw payload column to rebuild from
    superseded: int = 0  # open rejects not re-delivered: their key is held, or a later one of theirs wins
    marked: bool = True  # whether the superseded rows were re-stamped `(superseded)` (not on Spark)


@dataclass(frozen=True)
class Candidate:
    """An open reject row whose bronze row is gone: what replay could re-deliver."""

    reject_id: str
    source: str  # the bronze relation it came from
    source_row_id: str
    load_id: Optional[str]  # the delivery it was diverted from
    last_seen: Any  # that delivery's `_ingested_at`
    raw: Optional[str]
    key: Optional[tuple]  # the key as text, None when a part is NULL (no identity: never competes)


# --------------------------------------------------------------------------- which rows would win


def key_text(value: Any) -> Optional[str]:
    """One key part as comparable text, whether it came from `key_values` JSON or a typed column:
    exact decimals (`10.50` = `10.5`), ISO dates and instants with a `T` and a fraction of a second
    without trailing zeros, booleans lower-case."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, Decimal)):
        return format(Decimal(str(value)).normalize(), "f")
    text = value.isoformat() if isinstance(value, (dt.date, dt.datetime)) else str(value)
    text = re.sub(r"^(\d{4}-\d{2}-\d{2}) (\d)", r"\1T\2", text)
    # a fraction of a second without its trailing zeros: `json_object` / `to_json` write `.5`,
    # Python's isoformat `.500000` (decision 0976)
    return re.sub(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d*?)0*)?(?=$|[+-]|Z)",
                  lambda m: m.group(1) + ("." + m.group(2) if m.group(2) else ""), text)


def key_of(values: Iterable[Any]) -> Optional[tuple]:
    """A key as a tuple of texts, or None when any part is NULL (the key audit skips such rows)."""
    parts = tuple(key_text(v) for v in values)
    return None if any(p is None for p in parts) else parts


def delivery_order(c: Candidate) -> tuple:
    """Sort key, latest delivery first: the pipeline's delivery order (`_ingested_at desc nulls
    last`, a replayed delivery first, `_load_id desc nulls last`), then `_source_row_id` and the
    reject id, so it is total."""
    seen = key_text(c.last_seen)
    return (seen is None, _desc(seen), c.load_id != REPLAY_LOAD_ID, c.load_id is None, _desc(c.load_id),
            _desc(c.source_row_id), _desc(c.reject_id))


def _desc(text: Optional[str]) -> tuple:
    # a descending order on text, as a tuple that sorts ascending
    return tuple(-ord(ch) for ch in (text or "")) + (1,)


def winners(entity: Entity, candidates: list[Candidate], held: set) -> tuple[list[Candidate], list[Candidate]]:
    """(the candidates to re-deliver, the superseded ones).

    With `dedupe:` every candidate goes back: the build ranks them, bronze's rows and each other
    by the entity's own dedupe order (field desc, tie_break, `_source_row_id`, `_load_id`), over
    the transformed values only the build computes. Without it, a key bronze already delivers
    (`held`) takes no re-delivery, and of several candidates of one free key only the latest
    delivery goes back; a candidate with a NULL key part competes with nothing.
    """
    if entity.dedupe:
        return list(candidates), []
    back, lost, taken = [], [], set(held)
    for c in sorted(candidates, key=delivery_order):
        if c.key is not None and c.key in taken:
            lost.append(c)
            continue
        if c.key is not None:
            taken.add(c.key)
        back.append(c)
    return back, lost


# --------------------------------------------------------------------------- reading the warehouse


def _columns(cur, dialect: str, rel: str) -> list[str]:
    execute(cur, dialect, f"select * from {rel} where 1 = 0")
    return [d[0] for d in cur.description]


def _key_from_json(entity: Entity, key_values: Any) -> Optional[tuple]:
    if not key_values:
        return None
    # JSON text on every engine assay writes; a driver that parses a json column hands a dict
    values = key_values if isinstance(key_values, dict) else json.loads(key_values, parse_float=Decimal)
    return key_of(values.get(k) for k in entity.key)


def _held_keys(cur, dialect: str, project: Project, entity: Entity, present: dict, wanted: set,
               candidates: frozenset = frozenset()) -> set:
    """The keys among `wanted` that the next build will find in bronze or in the entity: the
    latest deliveries the last build staged that are still in bronze (`present`, by source), or
    that it kept. A diverted one counts too: under a relaxed spec the next build may keep it.
    A candidate's own delivery (`candidates`: source, `_source_row_id`) holds nothing: its
    re-delivery supersedes it."""
    if not wanted:
        return set()
    sources = {m.name: m.source for m in entity.mappings}
    keys = ", ".join(relation(dialect, k) for k in entity.key)
    staged = relation(dialect, project.schema("silver"), f"{entity.name}__staged")
    execute(cur, dialect, f"select _mapping, _source_row_id, _route, {keys} from {staged} where _delivery_rank = 1")
    held = set()
    for mapping, srid, route, *key in _stream(cur):
        k = key_of(key)
        if (sources.get(mapping), srid) in candidates:
            continue
        if k in wanted and (route == "kept" or srid in present.get(sources.get(mapping), ())):
            held.add(k)
    return held


def _stream(cur):
    """The rows of the cursor's query a batch at a time where the driver can (DuckDB, psycopg2);
    Spark's child connection returns its rows at once."""
    if not hasattr(cur, "fetchmany"):
        yield from cur.fetchall()
        return
    while True:
        rows = cur.fetchmany(_FETCH)
        if not rows:
            return
        yield from rows


def _candidates(cur, dialect: str, project: Project, entity: Entity, report: ReplayReport) -> tuple[list[Candidate], dict, set]:
    """The open reject rows the next build would not judge, each source's `_source_row_id`s, and
    the keys of the open rows bronze holds as a replayed delivery. Candidates: those whose bronze
    row is gone and, for an incremental entity, those still in bronze unless a replayed delivery
    of theirs is there already (decision 1100)."""
    ledger = entity.materialized == "incremental"
    reject = relation(dialect, project.schema("silver"), f"{entity.name}__reject")
    out, present, pending = [], {}, set()
    for source in sorted({m.source for m in entity.mappings}):
        rows = execute(cur, dialect, "select reject_id, _source_row_id, _load_id, last_seen, raw, key_values "
                                     f"from {reject} where resolved_at is null and source_relation = ?", (source,)).fetchall()
        # varchar is text on every engine (Spark's connection spells it STRING)
        rel = relation(dialect, project.schema("bronze"), source)
        present[source], replayed = set(), set()
        for srid, load in execute(cur, dialect, f"select cast(_source_row_id as varchar), cast(_load_id as varchar) from {rel}").fetchall():
            present[source].add(srid)
            if load == REPLAY_LOAD_ID:
                replayed.add(srid)
        for rid, srid, load_id, seen, raw, key_values in rows:
            report.in_bronze += srid in present[source]
            if srid in replayed:
                # an earlier replay's delivery, which the last build may not have seen: the next
                # build judges it, so it holds its key as a bronze row does (decision 0976)
                pending.add(_key_from_json(entity, key_values))
            if ledger and srid in replayed:
                report.needs_full_refresh += 1
            elif ledger or srid not in present[source]:
                out.append(Candidate(rid, source, srid, load_id, seen, raw, _key_from_json(entity, key_values)))
    return out, present, pending - {None}


# --------------------------------------------------------------------------- writing


def _redeliver(cur, dialect: str, project: Project, source: str, rows: list[Candidate], report: ReplayReport, dry_run: bool) -> None:
    rel = relation(dialect, project.schema("bronze"), source)
    columns = _columns(cur, dialect, rel)
    values, written = [], set()
    for c in rows:
        # one bronze row is a source row of every mapping that reads the relation, so the reject
        # rows of two mappings of it put back one delivery, which both mappings judge (decision 0947)
        if c.source_row_id in written:
            continue
        payload = exactjson.loads(c.raw) if c.raw else None
        if payload is None:
            report.unrecoverable += 1
            continue
        payload["_load_id"] = REPLAY_LOAD_ID
        payload["_source_row_id"] = c.source_row_id
        written.add(c.source_row_id)
        values.append([bronze_text(payload.get(col)) for col in columns])
    report.redelivered[source] = len(values)
    if values and not dry_run:
        marks = ", ".join(["?"] * len(columns))
        # Bronze column names come from the loader, not from a validated spec: quoted one by one.
        names = ", ".join(relation(dialect, col) for col in columns)
        try:
            executemany(cur, dialect, f"insert into {rel} ({names}) values ({marks})", values)
        except Exception as exc:
            if not is_driver_error(exc):
                raise
            # The engine's message quotes the value it refused, which may be a pii field's or a
            # redacted path's: only the kind of refusal leaves (docs/privacy.md).
            raise WarehouseError(
                f"cannot re-deliver {len(values)} rows into {rel}: the warehouse refused a value "
                f"({type(exc).__name__}; its message is not shown, since it quotes the row). A bronze column's type "
                "no longer reads a value the reject row kept; give the column a type that reads it (text reads every "
                "value), or re-ingest the rows from the source") from None


def bronze_text(value: Any) -> Optional[str]:
    """A `raw` member as the text its bronze column casts back from (decision 0975): `raw` is the
    row as JSON, so a JSON (or struct, list) column's value is a nested document, written again as
    JSON, a number is read exactly (`exactjson`) and written digit for digit, a boolean in JSON's
    spelling. Python's `str` would write `{'city': 'Oslo'}`, which is not JSON, and a float's repr."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (dict, list)):
        return exactjson.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _mark_superseded(conn, cur, dialect: str, project: Project, entity: Entity, lost: list[Candidate], now: dt.datetime) -> bool:
    """Re-stamp the losers' `failed_rules` as `(superseded)`; `last_seen` and `resolved_at` stay.
    False where the engine's reject table takes no UPDATE (Spark)."""
    rules = MARKED_RULES.get(dialect)
    if rules is None:
        return False
    table = writable_relation(conn, dialect, project.schema("silver"), f"{entity.name}__reject")
    executemany(cur, dialect, f"update {table} set failed_rules = ?, last_evaluated_at = ? where reject_id = ?",
                [(rules, now, c.reject_id) for c in lost])
    return True


def replay(conn, dialect: str, project: Project, entity: Entity, dry_run: bool = False,
           now: Optional[dt.datetime] = None) -> ReplayReport:
    """Re-deliver the open reject rows of `entity` whose bronze row is gone and that could win
    their key; mark the others `(superseded)`; return what was (or, dry, would be) done.
    `now` (naive UTC) stamps `last_evaluated_at` of the marked rows."""
    report = ReplayReport(entity.name)
    cur = conn.cursor()
    candidates, present, pending = _candidates(cur, dialect, project, entity, report)
    own = frozenset((c.source, c.source_row_id) for c in candidates)
    held = set() if entity.dedupe else pending | _held_keys(cur, dialect, project, entity, present, {c.key for c in candidates if c.key}, own)
    back, lost = winners(entity, candidates, held)
    # One transaction where the engine has them: "cannot re-deliver 4 rows" had committed the rows
    # before the refused one (an outside tester, session 44), and the next replay counted 3.
    atomic = not dry_run and dialect in TRANSACTIONAL and (back or lost)
    if atomic:
        cur.execute("begin transaction")
    try:
        for source in sorted({c.source for c in back}):
            _redeliver(cur, dialect, project, source, [c for c in back if c.source == source], report, dry_run)
        report.superseded = len(lost)
        if lost and not dry_run:
            stamp = now or dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
            report.marked = _mark_superseded(conn, cur, dialect, project, entity, lost, stamp)
    except BaseException:
        if atomic:
            cur.execute("rollback")
        raise
    if atomic:
        cur.execute("commit")
    return report
