"""Reject history and reject resolution, decided once for both targets (reference 001, decision 0014).

A reject row's history: `first_seen` is sticky (the delivery that first diverted the source row),
`last_seen` follows the diverted delivery, the rules are re-stamped, and a diverted row is open
(`resolved_at` NULL). An open reject row whose source row's latest delivery this build admitted
(`kept`) or lost its key (`deduped`) is resolved (`admitted` | `deduped`), never deleted; a
superseded delivery never resolves or reopens anything. `last_run_id` names the build that last
wrote the row (diverted or resolved it): a build writes its diversions before its entity's checks
decide, so a set-back build's rows stay, attributed to a build whose entity did not publish, until
the next build that publishes re-judges them (decision 0944).

What stays with a target is only how its tool keeps the table over time: how the query reaches the
table's previous state (`Prior`), and where resolution runs (dbt: the package's UPDATE / MERGE /
swap after the entity publishes, fed `resolving_query`; SQLMesh: a branch of the model's own query,
`reject_query(..., resolve=True)`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ..ir.model import Entity
from .outputs import diverted_select
from .spelling import Spelling

# The columns a reject row carries unchanged from the delivery that diverted it.
CARRIED = ("reject_id", "entity", "mapping", "source_relation", "_source_row_id", "_load_id")
# Re-stamped from the diverted delivery on every build that still diverts it.
RESTAMPED = ("failed_rules", "disposition", "key_values", "raw")
# Every column of the reject table, in order, with its assay type (`flags`: the failed rules' array).
COLUMNS = tuple((c, "string") for c in CARRIED) + (
    ("first_seen", "timestamp"),
    ("last_seen", "timestamp"),
    ("failed_rules", "flags"),
    ("disposition", "string"),
    ("key_values", "string"),
    ("raw", "string"),
    ("resolved_at", "timestamp"),
    ("resolution", "string"),
    ("last_evaluated_at", "timestamp"),
    ("last_run_id", "string"),
)


def _same_source_row(sp: Spelling, a: str, b: str) -> str:
    """Two rows (aliases `a`, `b`) describe one source row: the identity of a reject row is
    (`source_relation`, `mapping`, `_source_row_id`), never `_load_id` (reference 001; decision 0947)."""
    return sp.join("and", (f"{a}.{c} = {b}.{c}" for c in ("source_relation", "mapping", "_source_row_id")))


def _always(when: str, otherwise: str) -> str:
    return when


@dataclass(frozen=True)
class Prior:
    """How a target's reject query reaches the table's previous state.

    `relation` is the reject table itself as the query names it; `known(when, otherwise)` spells
    text that holds only where a previous state exists (dbt: inside `keyed_is_incremental()`;
    SQLMesh creates the table empty before the first run, so there it always exists)."""

    relation: str
    known: Callable[[str, str], str] = _always


def resolving_query(sp: Spelling, entity: Entity) -> str:
    """The source rows this build resolves: `source_relation`, `mapping`, `_source_row_id`,
    `resolution`.

    Only a source row's latest delivery speaks for it (`_delivery_rank = 1`); `kept` resolves
    as `admitted`, a key's loser as `deduped`. A source row is one of a mapping (decision 0014):
    where two mappings read one relation, one mapping keeping a bronze row resolves only that
    mapping's reject row of it (decision 0947). One scan of the staged relation."""
    i = sp.indent
    source = sp.sql("case s._mapping ") + "".join(
        sp.sql("when {} then {} ", sp.string(m.name), sp.string(m.source)) for m in entity.mappings
    ) + sp.kw("end")
    return "\n".join(
        [
            sp.sql("select"),
            sp.sql("{}{} as source_relation,", i, source),
            sp.sql("{}s._mapping as mapping,", i),
            f"{i}s._source_row_id,",
            sp.sql("{}case when s._route = 'deduped' then 'deduped' else 'admitted' end as resolution", i),
            sp.sql("from {} as s", sp.staged(entity)),
            sp.sql("where s._delivery_rank = 1 and s._route in ('kept', 'deduped')"),
        ]
    )


def resolution_bound(sp: Spelling, entity: Entity, since: str) -> Optional[str]:
    """The condition (an `and` line for `resolving_query`) that narrows an incremental entity's
    resolution to the ledger rows written after `since`, the newest `_processed_at` the entity had
    published before this build; None for an entity without a ledger.

    Only a ledger row written since can resolve an open reject row: a reject row is written for a
    diverted latest delivery, and the build that wrote the kept or deduped delivery that resolves
    it also resolved it, right after publishing it (the same transaction). A build that did not
    publish leaves `since` where it was, so the next one resolves what it would have."""
    if entity.materialized != "incremental":
        return None
    return sp.sql("{}and s._processed_at > {}", sp.indent, since)


def reject_query(sp: Spelling, entity: Entity, prior: Prior, resolve: bool) -> str:
    """The reject table's rows after this build.

    Every diverted row, with its history carried from `prior`; with `resolve`, also the open
    prior rows this build resolves (a target that resolves elsewhere, after publishing, passes
    False and feeds `resolving_query` to its own mechanics)."""
    i = sp.indent
    now = sp.call("run_timestamp")
    # The build that wrote the row, diverting or resolving it (decision 0944): a build whose entity
    # is then set back has written its diversions already, and this says which build they are of.
    run = sp.run_id()
    known = prior.known
    # An incremental entity's ledger keeps every row it judged, and stamps a row `_processed_at`
    # only when it (re)writes it: the reject rows to write are the diverted ledger rows written
    # after their open reject row was (decision 0407). A build whose reject step did not run is
    # caught up by the next, as the entity's publish is (decision 1090).
    written = (prior.relation, known) if entity.materialized == "incremental" else ()
    ctes = [
        sp.sql("with diverted as ("),
        sp.sql("\n{}union all\n", i).join(diverted_select(sp, entity, m, *written) for m in entity.mappings),
        ")",
        known("\n".join(["", sp.sql(", prior as ("), sp.sql("{}select * from {}", i, prior.relation), ")", ""]), ""),
    ]
    if resolve:
        body = "\n".join(f"{i}{line}" for line in resolving_query(sp, entity).splitlines())
        ctes += [sp.sql(", resolving as ("), body, ")"]
    lines = [
        *ctes,
        "",
        "-- still or newly diverted: first_seen is sticky, last_seen follows the delivery, rules are re-stamped.",
        "-- Only the latest delivery of a source row can be diverted (an earlier one is superseded), so",
        "-- each source row appears at most once here. A row already in the table keeps the reject_id",
        "-- it was minted with (decision 0947), so a mapping added later re-mints none.",
        sp.sql("select"),
        ",\n".join(i + (known(sp.sql("coalesce(p.reject_id, d.reject_id) as reject_id"), "d.reject_id") if c == "reject_id"
                         else f"d.{c}") for c in CARRIED) + ",",
        i + known(sp.sql("coalesce(p.first_seen, d._ingested_at)"), "d._ingested_at") + sp.sql(" as first_seen,"),
        sp.sql("{}d._ingested_at as last_seen,", i),
        "".join(f"{i}d.{c},\n" for c in RESTAMPED)
        + sp.sql("{}{} as resolved_at,", i, sp.cast(sp.kw("null"), "timestamp", False)),
        sp.sql("{}{} as resolution,", i, sp.cast(sp.kw("null"), "string", False)),
        sp.sql("{}{} as last_evaluated_at,", i, now),
        sp.sql("{}{} as last_run_id", i, run),
        sp.sql("from diverted as d"),
        known(sp.sql("left join prior as p on {}", _same_source_row(sp, "p", "d")), ""),
    ]
    if resolve:
        lines += [
            "",
            sp.sql("union all"),
            "",
            "-- open rejects this build admitted or deduped: resolved, never deleted",
            sp.sql("select"),
            ",\n".join(f"{i}p.{c}" for c in CARRIED + ("first_seen", "last_seen") + RESTAMPED) + ",",
            sp.sql("{}{} as resolved_at,", i, now),
            sp.sql("{}r.resolution,", i),
            sp.sql("{}{} as last_evaluated_at,", i, now),
            sp.sql("{}{} as last_run_id", i, run),
            sp.sql("from prior as p"),
            sp.sql("inner join resolving as r on {}", _same_source_row(sp, "r", "p")),
            sp.sql("where p.resolved_at is null"),
        ]
    return "\n".join(lines) + "\n"
