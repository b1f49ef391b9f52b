"""The two outputs of the staged relation: the kept rows (the entity) and the diverted rows (rejects).

What each output selects is decided here; the reject rows' history and resolution across builds
in `rejects.py`; only the tool's way of keeping a table over time stays with the target.
"""

from __future__ import annotations

from typing import Callable

from ..ir.model import Entity, Mapping
from .spelling import Spelling, Sql
from .staged import LINEAGE, diverted


def kept_query(sp: Spelling, entity: Entity, staged: str | None = None, processed_at: bool = False) -> str:
    """The entity's rows: the staged rows routed `kept`, with the quality flags of an opted-in entity.

    `staged` names the staged relation when it is not the staged model itself (SQLMesh's staged
    model measuring the entity's checks over its own rows, decision 0921). `processed_at` carries
    the ledger's `_processed_at` along (an incremental entity publishes what changed since it,
    decision 1090)."""
    cols = [sp.ident(c.name) for c in entity.columns] + list(LINEAGE)
    if entity.opted_in:
        cols += [sp.sql("_failed_rules as _quality_flags"), sp.sql("{} as _quality_ok", sp.call("quality_ok", Sql("_failed_rules")))]
    if processed_at:
        cols.append("_processed_at")
    return "\n".join(
        [
            sp.sql("select"),
            ",\n".join(f"{sp.indent}{c}" for c in cols),
            sp.sql("from {}", staged or sp.staged(entity)),
            sp.sql("where _route = 'kept'"),
            "",
        ]
    )


def versioned_query(sp: Spelling, entity: Entity, current: str) -> str:
    """What a type-2 entity's history versions: every current kept row.

    Every one has its full key: a merge on the key never matches a NULL, so a row without one
    cannot be versioned, and the implicit `not_null` rule of each key column (ir.resolve) diverts
    it before it is kept, with the entity's quarantine, or stops the build where there is none
    (decision 0416, superseding 0414, which left such rows out of the history here: kept,
    counted, and absent from what readers read). Nothing is filtered here, so nothing the
    entity keeps is left out of its history."""
    return "\n".join([sp.sql("select *"), sp.sql("from {}", current), ""])


def shares_source(entity: Entity, mapping: Mapping) -> bool:
    """Whether another mapping of `entity` reads `mapping`'s bronze relation (a merged entity whose
    mappings read one relation: each bronze row is one source row of each of them)."""
    return sum(m.source == mapping.source for m in entity.mappings) > 1


def reject_id(sp: Spelling, entity: Entity, mapping: Mapping) -> str:
    """The id a diverted row's reject row is minted with: its source relation and source row,
    stable across deliveries (`_load_id` never takes part); and its mapping where another mapping
    of the entity reads the same relation, so that the two mappings' reject rows of one bronze row
    are two rows (decision 0947). A relation read by one mapping keeps the id it always had; a
    row already in the table keeps the id it was minted with (`rejects.reject_query`)."""
    mapping_name = (mapping.name,) if shares_source(entity, mapping) else ()
    return sp.call("reject_id", mapping.source, Sql("s._source_row_id"), *mapping_name)


def diverted_select(sp: Spelling, entity: Entity, mapping: Mapping, written: str = "",
                    known: Callable[[str, str], str] = lambda when, otherwise: when) -> str:
    """One mapping's diverted rows (quarantined or failed) with their key and raw bronze payload.

    `written`, when given, names the reject table: only the diverted rows it does not already hold
    open as written since their ledger row was (`rejects.reject_query` decides when); `known`
    spells text that holds only where that table exists (`rejects.Prior.known`)."""
    i, b = sp.indent, sp.row_alias
    keys = [(k, f"s.{sp.ident(k)}") for k in entity.key]
    lines = [
        sp.sql("{}select", i),
        sp.sql("{}{} as reject_id,", i * 2, reject_id(sp, entity, mapping)),
        sp.sql("{}{} as entity,", i * 2, sp.string(entity.name)),
        sp.sql("{}s._mapping as mapping,", i * 2),
        sp.sql("{}{} as source_relation,", i * 2, sp.string(mapping.source)),
        f"{i * 2}s._source_row_id,",
        f"{i * 2}s._load_id,",
        f"{i * 2}s._ingested_at,",
        sp.sql("{}s._failed_rules as failed_rules,", i * 2),
        sp.sql("{}case when s._route = 'failed' then 'fail' else 'quarantine' end as disposition,", i * 2),
        sp.sql("{}{} as key_values,", i * 2, sp.json_object(keys)),
        sp.sql("{}{} as raw", i * 2, sp.row_json(b, entity.redact)),
        sp.sql("{}from {} as s", i, sp.staged(entity)),
    ]
    where = sp.sql("{}where s._mapping = {} and {}", i, sp.string(mapping.name), diverted(sp, "s"))
    if written:
        # before the bronze join, so that only the rows to write probe bronze
        join = "\n".join([
            sp.sql("{}left join {} as w", i, written),
            sp.sql("{}on w.source_relation = {} and w.mapping = s._mapping and w._source_row_id = s._source_row_id", i * 2,
                   sp.string(mapping.source)),
            sp.sql("{}and w.resolved_at is null and w.last_evaluated_at >= s._processed_at", i * 2),
        ])
        lines.append(known(join, ""))
        where += known(sp.sql(" and w._source_row_id is null"), "")
    lines += [
        sp.sql("{}inner join {} as {}", i, sp.bronze(mapping.source), b),
        # the delivery, not just the source row: bronze may hold earlier deliveries of it
        sp.sql("{}on {} = s._source_row_id", i * 2, sp.cast(f"{b}._source_row_id", "string", False)),
        sp.sql("{}and {} = s._load_id", i * 2, sp.cast(f"{b}._load_id", "string", False)),
    ]
    return "\n".join(lines + [where])
