"""The reject table across builds, successive builds of one bronze history, and comparing both
with what a warehouse holds."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Iterable, Mapping, Optional

from .judge import Build, MartRow, Oracle, as_spec, reject_id
from .spec import Spec
from .values import Undefined, Unsupported

REPLAY_LOAD_ID = "__replay__"


@dataclass
class RejectRow:
    reject_id: str
    entity: str
    mapping: str
    source_relation: str
    srid: str
    load_id: str
    first_seen: dt.datetime
    last_seen: dt.datetime
    failed_rules: tuple
    disposition: str  # quarantine | fail
    key_values: dict  # key column -> typed value (its JSON spelling is the engine's)
    raw: dict  # the bronze row minus redacted columns
    resolved_in: Optional[int] = None  # the build that resolved it
    resolution: Optional[str] = None  # admitted | deduped

    @property
    def open(self) -> bool:
        return self.resolved_in is None


@dataclass
class RejectLedger:
    rows: dict = field(default_factory=dict)  # reject_id -> RejectRow

    def apply(self, build: Build, build_no: int) -> None:
        """One reject row per source row, following its latest delivery (0014); first_seen sticky;
        resolving keeps the account of the last diversion (0301); never deleted."""
        if build.blocked:
            raise ValueError(f"a blocked build is not modelled: {build.blocked}")
        for name, j in build.entities.items():
            e = j.entity
            for r in j.rows:
                if r.superseded:
                    continue  # a superseded delivery never resolves or reopens anything
                rid = reject_id(r.source, r.srid)
                if r.route in ("quarantined", "failed"):
                    if e.redact_keys:
                        raise Unsupported(f"raw of {name}: a redacted key inside a JSON column")
                    previous = self.rows.get(rid)
                    self.rows[rid] = RejectRow(
                        rid, name, r.mapping, r.source, r.srid, r.load_id,
                        previous.first_seen if previous else r.ingested_at,
                        r.ingested_at,
                        r.failed_rules,
                        "fail" if r.route == "failed" else "quarantine",
                        {k: r.values[k] for k in e.key},
                        {k: v for k, v in r.bronze.items() if k not in e.redact},
                    )
                elif rid in self.rows and self.rows[rid].open:
                    how = "admitted" if r.route == "kept" else "deduped"
                    self.rows[rid] = replace(self.rows[rid], resolved_in=build_no, resolution=how)

    def of(self, entity: str) -> list:
        return sorted((r for r in self.rows.values() if r.entity == entity), key=lambda r: (r.source_relation, r.srid))

    def open_ids(self, entity: str) -> set:
        return {(r.source_relation, r.srid) for r in self.of(entity) if r.open}


class Warehouse:
    """Successive builds of one bronze history: what the warehouse must hold after each."""

    def __init__(self, spec):
        self.oracle = Oracle(spec)
        self.ledger = RejectLedger()
        self.builds: list[Build] = []

    @property
    def spec(self) -> Spec:
        return self.oracle.spec

    def respec(self, spec) -> None:
        """A spec change between builds: new rules, same reject history."""
        self.oracle = Oracle(spec)

    def build(self, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> Build:
        result = self.oracle.build(bronze)
        self.builds.append(result)
        self.ledger.apply(result, len(self.builds))
        return result

    def replay(self, entity: str, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> dict:
        """What `assay replay ENTITY` must re-deliver (0011): per bronze relation, the open reject
        rows whose source row is no longer in bronze, from `raw`, with `_load_id = '__replay__'`
        and the original `_source_row_id` (and `_ingested_at`, which `raw` carries)."""
        out: dict = {}
        for r in self.ledger.of(entity):
            if not r.open:
                continue
            present = {row["_source_row_id"] for row in bronze.get(r.source_relation, [])}
            if r.srid in present:
                continue
            out.setdefault(r.source_relation, []).append({**r.raw, "_load_id": REPLAY_LOAD_ID, "_source_row_id": r.srid})
        return out


# --------------------------------------------------------------------------- comparing with a warehouse
#
# Both sides are reduced to the same plain shapes so a failing assertion prints a readable diff.
# `query` is any callable running SQL and returning tuples (DbtProject.query, SQLMeshProject.query).
# Staged rows: (mapping, _source_row_id, rank, route, failed_rules, _load_id) where rank is the
# dedupe rank of a judged row (1) and "deduped" for every deduped row: the contract says a rank
# above 1 is deduped, and gives a superseded delivery (0014) no rank of its own.


def _plain_key_value(v: Any) -> Any:
    if isinstance(v, (Decimal, dt.date)):
        raise Undefined("the JSON spelling of a decimal or temporal key value is engine-specific")
    return v


def _rank(rank: Any, route: str) -> str:
    # One type in this tuple position, so states sort: a deduped delivery (a key loser or, since
    # 0014, a superseded delivery that has no rank at all) compares only as "deduped".
    return "deduped" if route == "deduped" else f"rank {rank}"


def expected_state(wh: Warehouse, build: Build) -> dict:
    """What the warehouse must hold after `build`, the latest build of `wh`."""
    state: dict = {"entity": {}, "staged": {}, "reject": {}, "mart": sorted(astuple_mart(m) for m in build.mart)}
    for name, j in build.entities.items():
        e = j.entity
        state["entity"][name] = sorted(
            (r.mapping, r.srid, *(r.values[c.name] for c in e.columns), r.load_id, r.ingested_at, r.failed_rules,
             not r.failed_rules)
            for r in j.kept
        )
        state["staged"][name] = sorted(
            (r.mapping, r.srid, _rank(r.rank, r.route), r.route, r.failed_rules, r.load_id) for r in j.rows
        )
        state["reject"][name] = sorted(
            (
                r.reject_id, r.entity, r.mapping, r.source_relation, r.srid, r.load_id, r.first_seen, r.last_seen,
                r.failed_rules, r.disposition, {k: _plain_key_value(v) for k, v in r.key_values.items()}, r.raw,
                r.open, r.resolution,
            )
            for r in wh.ledger.of(name)
        )
    return state


def astuple_mart(m: MartRow) -> tuple:
    return (m.entity, m.mapping or "", m.rule, m.disposition, m.rows_evaluated, m.rows_failed, m.rows_quarantined,
            m.rows_deduped)


def _names(value: Any) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v for v in value.split(",") if v)
    return tuple(value)


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, (str, bytes)) else value


def _schemas(spec: Spec, silver: Optional[str], gold: Optional[str]) -> tuple[str, str]:
    return silver or spec.schema("silver"), gold or spec.schema("gold")


def observed_state(query, spec, run_id: str, silver: Optional[str] = None, gold: Optional[str] = None) -> dict:
    """The same shapes as `expected_state`, read back from the warehouse (schemas from assay.yml)."""
    spec = as_spec(spec)
    silver, gold = _schemas(spec, silver, gold)
    state: dict = {"entity": {}, "staged": {}, "reject": {}}
    for e in spec.entities:
        cols = ", ".join(f'"{c.name}"' for c in e.columns)
        state["entity"][e.name] = sorted(
            (r[0], r[1], *r[2:-4], r[-4], r[-3], _names(r[-2]), r[-1])
            for r in query(
                f"select _mapping, _source_row_id, {cols}, _load_id, _ingested_at, _quality_flags, _quality_ok "
                f'from {silver}."{e.name}"'
            )
        )
        state["staged"][e.name] = sorted(
            (r[0], r[1], _rank(r[2], r[3]), r[3], _names(r[4]), r[5])
            for r in query(
                f'select _mapping, _source_row_id, _dedupe_rank, _route, _failed_rules, _load_id from {silver}."{e.name}__staged"'
            )
        )
        state["reject"][e.name] = sorted(
            (*r[:8], _names(r[8]), r[9], _json(r[10]), _json(r[11]), r[12] is None, r[13])
            for r in query(
                "select reject_id, entity, mapping, source_relation, _source_row_id, _load_id, first_seen, last_seen, "
                f'failed_rules, disposition, key_values, raw, resolved_at, resolution from {silver}."{e.name}__reject"'
            )
        )
    state["mart"] = sorted(
        (r[0], r[1] or "", *r[2:])
        for r in query(
            "select entity, mapping, rule, disposition, rows_evaluated, rows_failed, rows_quarantined, rows_deduped "
            f"from {gold}.mart_data_quality where run_id = '{run_id}'"
        )
    )
    return state


def placements(query, spec, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]], silver: Optional[str] = None) -> dict:
    """(entity, source relation, _source_row_id, _load_id) -> the places that delivery is found in.

    Read from the warehouse alone, so the conservation law is checked without the oracle's help.
    A delivery is one bronze row; a reject row stands for its source row's latest diverted
    delivery (0014), so it is found under that delivery's `_load_id`.
    """
    spec = as_spec(spec)
    silver = silver or spec.schema("silver")
    places: dict = {}
    for e in spec.entities:
        source_of = {m.name: m.source for m in e.mappings}
        for m in e.mappings:
            for row in bronze[m.source]:
                places[(e.name, m.source, row["_source_row_id"], row["_load_id"])] = []
        found = [("entity", source_of.get(mp, mp), s, ld) for mp, s, ld in
                 query(f'select _mapping, _source_row_id, _load_id from {silver}."{e.name}"')]
        found += [("reject", src, s, ld) for src, s, ld in query(
            f'select source_relation, _source_row_id, _load_id from {silver}."{e.name}__reject" where resolved_at is null')]
        found += [("deduped", source_of.get(mp, mp), s, ld) for mp, s, ld in query(
            f"select _mapping, _source_row_id, _load_id from {silver}.\"{e.name}__staged\" where _route = 'deduped'")]
        for place, src, srid, load in found:
            places.setdefault((e.name, src, srid, load), []).append(place)
    return places


def check_resolution_stamps(steps) -> None:
    """`resolved_at` is stamped by the build that resolves a reject row (later than every earlier
    stamp) and never moves afterwards. `steps` yields, per build in order, (label, build number,
    {reject_id: the build the oracle says resolved it, or None}, {reject_id: observed resolved_at})."""
    earlier: dict = {}
    for label, n, resolved_in, resolved_at in steps:
        newest_before = max((v for v in earlier.values() if v is not None), default=None)
        for rid, when in resolved_in.items():
            got = resolved_at.get(rid)
            if when is None:
                assert got is None, (label, rid)
            elif when == n:
                assert got is not None and (newest_before is None or got > newest_before), (label, rid, got)
            else:
                assert got == earlier[rid], (label, rid, "resolved_at moved after resolution")
        earlier = dict(resolved_at)
