"""Loads bronze and an incremental entity's ledger hold alike (decision 0406).

The ledger keeps, per row, a fingerprint of the bronze delivery it came from (`_bronze_fp`: the
raw `_source_row_id` and `_ingested_at`, unparsed). Per mapping and `_load_id`, bronze's row
count and fingerprint sum against the ledger's (rows without a fingerprint not counted) tell
which loads are *settled*: the ledger holds exactly bronze's deliveries of them. The ledger step
leaves settled loads out of its search for new rows; the conservation audit proves them by
per-load sums instead of delivery by delivery. Both read the same CTEs, written here once.
"""

from __future__ import annotations

from ..ir.model import Entity, Mapping
from .spelling import Spelling, Sql

FINGERPRINT = "_bronze_fp"  # a ledger row's delivery fingerprint


def raw(mapping: Mapping, name: str) -> str:
    """Bronze's own column `name` of a mapping (alias `b`), or NULL where its bronze has none."""
    return f"b.{name}" if name in mapping.bronze_columns else "null"


def delivery_fingerprint(sp: Spelling, mapping: Mapping) -> str:
    """A bronze row's delivery fingerprint, over bronze's raw metadata (alias `b`)."""
    return sp.call("delivery_fingerprint", Sql(raw(mapping, "_source_row_id")), Sql(raw(mapping, "_ingested_at")))


def load_id(sp: Spelling, mapping: Mapping) -> str:
    """A bronze row's `_load_id` as the ledger holds it (text)."""
    return sp.cast(raw(mapping, "_load_id"), "string", False)


def settled_ctes(sp: Spelling, entity: Entity, ledger: str) -> list[str]:
    """The CTEs `assay_bronze_loads`, `assay_ledger_loads` and `assay_settled` (mapping, load),
    each as `name as (...)`, for a WITH list. Bronze is read for its three metadata columns only."""
    i = sp.indent
    bronze = []
    for m in entity.mappings:
        bronze.append(
            sp.sql("{i}select {name} as _mapping, {load} as _load_id, count(*) as _rows, {fp} as _fp\n"
                   "{i}from {src} as b\n{i}group by {load}", i=i, name=sp.string(m.name), load=load_id(sp, m),
                   fp=sp.call("fingerprint_sum", Sql(delivery_fingerprint(sp, m))), src=sp.bronze(m.source))
        )
    return [
        "assay_bronze_loads as (\n" + sp.sql("\n{}union all\n", i).join(bronze) + "\n)",
        "\n".join([
            "assay_ledger_loads as (",
            sp.sql("{}select _mapping, _load_id, count({fp}) as _rows, {sum} as _fp", i, fp=FINGERPRINT,
                   sum=sp.call("fingerprint_sum", Sql(FINGERPRINT))),
            sp.sql("{}from {}", i, ledger),
            sp.sql("{}group by _mapping, _load_id", i),
            ")",
        ]),
        "\n".join([
            "assay_settled as (",
            sp.sql("{}select n._mapping, n._load_id", i),
            sp.sql("{}from assay_bronze_loads as n", i),
            sp.sql("{}inner join assay_ledger_loads as o", i),
            sp.sql("{}on o._mapping = n._mapping and o._load_id = n._load_id and o._rows = n._rows and o._fp = n._fp", i * 2),
            ")",
        ]),
    ]
