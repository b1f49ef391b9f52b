"""What `assay explain` answers (`explain.Explainer` gathers it): the deliveries of one key or
source row as the last build left them, its reject rows, and the explanation as lines of text or
as JSON."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional

# How many deliveries of one key explain lists unless told otherwise (`--limit`; decision 0995).
LIMIT = 100

# How the staged relation names a route, and what it means to someone reading about one row.
ROUTE_WORDS = {
    "kept": "kept in the entity",
    "quarantined": "quarantined to the reject table",
    "failed": "diverted by a fail rule (the build stops until it is fixed)",
    "deduped": "deduped",
}


@dataclass
class Delivery:
    """One bronze delivery of the key (or source row), as the build staged it."""

    mapping: str
    source_relation: str
    source_row_id: str
    load_id: Optional[str]
    ingested_at: Optional[str]
    route: str
    dedupe_rank: int
    superseded: bool
    values: dict[str, Optional[str]]
    failed_rules: list[str]
    bronze: dict[str, Optional[str]] = field(default_factory=dict)
    verdicts: list[dict] = field(default_factory=list)
    coercions: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)
    #: An incremental entity's delivery older than the ledger's window when it was processed
    #: (decision 0401): not ranked, not judged, quarantined under `_late_arrival`.
    late: bool = False
    #: The delivery's place among its source row's deliveries (1: the latest, judged; decision 0014).
    delivery_rank: int = 1
    #: False for a delivery the incremental ledger kept after bronze dropped it (retention, or an
    #: upserting loader that overwrote it): explain must not count it as one bronze holds.
    in_bronze: bool = True
    #: The staged row's key values as stored (never shown: `values` holds what may be shown).
    key_values: tuple = ()

    @property
    def identity(self) -> tuple:
        """(mapping, source row id, load id, key values): which staged row it is (decision 1135).
        The key tells apart two rows of one source row in one load, a broken load the
        ingestion-metadata check stops the build on (an outside tester, session 44)."""
        return (self.mapping, self.source_row_id, self.load_id, self.key_values)

    def label(self) -> str:
        row = self.source_row_id if self.source_row_id is not None else "without a _source_row_id"
        # a mapping named apart from its relation (one relation feeding two mappings) is said: each
        # bronze row is a delivery of each of them (decision 0947)
        via = f" via mapping {self.mapping}" if self.mapping and self.mapping != self.source_relation else ""
        return f"{self.source_relation} row {row}{via} (load {self.load_id}, ingested {self.ingested_at})"


@dataclass
class Explanation:
    entity: str
    key: dict[str, Optional[str]]
    deliveries: list[Delivery]
    rejects: list[dict]
    in_entity: bool
    summary: list[str]
    #: A type-2 key bronze no longer delivers: its versions in the history, `{"versions": n,
    #: "current": m}` (decision 0968); None otherwise.
    history: Optional[dict] = None
    #: Every delivery of the key; more than `deliveries` when only the first were listed (decision 0995).
    deliveries_total: int = 0
    #: Whether bronze holds loads the last build did not judge (explain_builds.unjudged_loads).
    unjudged: bool = False

    def as_dict(self) -> dict:
        return {
            "entity": self.entity,
            "key": self.key,
            "in_entity": self.in_entity,
            "history": self.history,
            "summary": self.summary,
            # a delivery's stored key values only tell deliveries apart; a pii key is never shown
            "deliveries": [{k: v for k, v in d.__dict__.items() if k != "key_values"} for d in self.deliveries],
            "deliveries_total": max(self.deliveries_total, len(self.deliveries)),
            "rejects": self.rejects,
        }

    def render(self) -> list[str]:
        """The explanation as lines of text for a terminal."""
        lines = list(self.summary)
        for n, d in enumerate(self.deliveries, 1):
            lines.append("")
            route = "arrived late, quarantined to the reject table unjudged" if d.late else ROUTE_WORDS.get(d.route, d.route)
            lines.append(f"{n}. {d.label()}: {route}")
            for sentence in d.why:
                lines.append(f"   {sentence}")
            shown = ", ".join(f"{k}={v!r}" for k, v in d.values.items())
            lines.append(f"   transformed values: {shown}")
            for c in d.coercions:
                lines.append(f"   coercion failed: {c}")
            for v in d.verdicts:
                lines.append(f"   rule {v['rule']} ({v['disposition']}): {v['verdict']}")
        more = self.deliveries_total - len(self.deliveries)
        if more > 0:
            lines.append("")
            lines.append(f"... and {more} more {'delivery' if more == 1 else 'deliveries'} of this key, not listed "
                         "(`--limit 0` lists every one; the reject rows below are the listed deliveries')")
        for r in self.rejects:
            lines.append("")
            state = (f"resolved {r['resolved_at']} ({r['resolution']})" if r["resolved_at"] is not None
                     else "open")
            lines.append(
                f"reject row {r['reject_id']} for {r['source_relation']} row {r['_source_row_id']}: {state}; "
                f"first seen {r['first_seen']}, last seen {r['last_seen']} (load {r['_load_id']}), "
                f"failed rules: {', '.join(r['failed_rules']) or 'none'}"
                # the build that wrote it last: a set-back build's rows name it (decision 0944)
                + (f"; written by run {r['last_run_id']}" if r.get("last_run_id") else "")
            )
        return lines


def open_rejects_sentence(rejects: list[dict], counted: Optional[int] = None) -> str:
    """The sentence that ends the summary's second line, 0 included (docs/operating.md): the open
    rows of `rejects`, or `counted` where only some deliveries were listed (decision 0995)."""
    n = counted if counted is not None else len([r for r in rejects if r["resolved_at"] is None])
    return f" {n} open reject {'row' if n == 1 else 'rows'}."


def dropped_sentence(entity: str, rejects: list[dict]) -> str:
    """The second line for a key (or source row) bronze no longer delivers whose reject rows are
    kept: which source rows were diverted, and that replay re-delivers an open one (decision 0920)."""
    srids = sorted({str(r["_source_row_id"]) for r in rejects if r.get("_source_row_id") is not None})
    one = len(srids) == 1
    opened = any(r["resolved_at"] is None for r in rejects)
    return (f"It is not in the entity: bronze no longer holds {'its delivery' if one else 'its deliveries'} "
            f"{', '.join(srids)}, which the reject table keeps"
            + (f" (`assay replay {entity}` re-delivers an open reject row whose bronze row is gone, when its key "
               "is free: decision 0920)" if opened else "")
            + "." + open_rejects_sentence(rejects))


def value_text(value: Any) -> Optional[str]:
    """A value read from the warehouse as explain shows it (an instant with a space, not a `T`)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, Decimal)):
        return str(value)
    return str(value)


def flag_list(value: Any) -> list[str]:
    """`_failed_rules` as a list, whether the engine stored an array or a comma string."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return sorted(str(v) for v in value)
    text = str(value).strip("{}")
    return sorted(p.strip().strip('"') for p in text.split(",") if p.strip())


def reject_entry(row: dict, source: Any, srid: Optional[str]) -> dict:
    """One reject row as explain tells it: its id, delivery, rules and resolution, never its raw
    payload or its key values."""
    return {
        "reject_id": row.get("reject_id"), "source_relation": source, "_source_row_id": srid,
        "_load_id": row.get("_load_id"), "first_seen": value_text(row.get("first_seen")),
        "last_seen": value_text(row.get("last_seen")), "failed_rules": flag_list(row.get("failed_rules")),
        "disposition": row.get("disposition"), "resolved_at": value_text(row.get("resolved_at")),
        "resolution": row.get("resolution"), "last_run_id": row.get("last_run_id"),
    }


def spec_changed(entity, staged_columns: frozenset, deliveries: list[Delivery],
                 ran: Optional[frozenset] = None) -> Optional[str]:
    """A sentence when the last build ran another version of the spec than the one read: its
    staged relation (`staged_columns`, lower-cased) lacks a column `entity` declares, its rows
    name rules the spec no longer has, or its quality history (`ran`: the rules its latest run
    counted, None when unknown) does not count a rule the spec declares. Explain reads what the
    build did; the spec only names things (outside testers, sessions 40 and 48, read rules the build
    never ran as "held")."""
    missing = sorted(c.name for c in entity.columns if c.name.lower() not in staged_columns)
    # a name the build reserves (`_late_arrival`, decision 0401) is no rule of the spec's
    gone = sorted({r for d in deliveries for r in d.failed_rules if not r.startswith(("_", "("))}
                  - {r.name for r in entity.rules})
    new = sorted(r.name for r in entity.rules if ran is not None and r.name not in ran)
    if not missing and not gone and not new:
        return None
    what = ([f"its staged relation has no column {', '.join(missing)}"] if missing else []) + (
        [f"it fired {', '.join(gone)}, which the spec no longer declares"] if gone else []) + (
        [f"it did not run {', '.join(new)}"] if new else [])
    return (f"The last build ran another version of the spec ({'; '.join(what)}): the verdicts below are that "
            "build's, and a rule it did not run says so; run the build to judge the rows by this spec.")


def unpublished_because(entity, sqlmesh: bool) -> str:
    """Why a key the last build kept is not in the published table. On SQLMesh a type-2 entity's
    history model is evaluated per interval: a plan inside an interval already run publishes the
    current rows, and the history versions them at the next `sqlmesh run` (docs/sqlmesh.md),
    which is no failure (an outside tester, session 40)."""
    if sqlmesh and entity.scd == "type2":
        return ("its history versions it at the next `sqlmesh run` when the last plan ran inside an interval "
                "already run, docs/sqlmesh.md; else the last plan or run was not published")
    return "the last build was not published"
