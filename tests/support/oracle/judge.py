"""One build of one spec: extract, supersede, dedupe, rules, route, mart (001, pipeline.md, 0014)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from functools import cmp_to_key
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional

from .spec import INGESTION, SEVERITY, Entity, Rule, Spec, read_spec
from .values import Expression, Unsupported, parse_timestamp, python_regex, run_chain, text_form, typed_literal, validate_chain

SUPPORTED_RULES = ("coercible", "not_null", "range", "length", "pattern", "in_set", "in_enum", "unique", "expression",
                   "normalize", "charset")


@dataclass(frozen=True)
class Staged:
    """One bronze row (one delivery) after extract, transform, supersede, dedupe, rules and route."""

    entity: str
    mapping: str
    source: str
    srid: str
    load_id: str
    ingested_at: dt.datetime
    values: dict  # entity column -> typed value (None for NULL or a failed cast)
    markers: frozenset  # columns whose chain failed to cast
    rank: Optional[int]  # rank among the latest deliveries of its key; None for a superseded delivery
    failed_rules: tuple  # sorted names of the rules that fired
    route: str  # kept | quarantined | failed | deduped
    bronze: dict  # the bronze row as delivered (text or None per column)
    superseded: bool = False  # a later delivery of the same source row exists (0014)


@dataclass(frozen=True)
class MartRow:
    entity: str
    mapping: Optional[str]
    rule: str
    disposition: str
    rows_evaluated: int
    rows_failed: int
    rows_quarantined: int
    rows_deduped: int


@dataclass
class EntityJudgement:
    entity: Entity
    rows: list  # Staged, in input order
    blocked: list  # sentences naming each blocking audit this build would fail

    def routed(self, route: str) -> list:
        return [r for r in self.rows if r.route == route]

    @property
    def kept(self) -> list:
        return self.routed("kept")

    @property
    def diverted(self) -> list:
        return [r for r in self.rows if r.route in ("quarantined", "failed")]

    @property
    def superseded(self) -> list:
        return [r for r in self.rows if r.superseded]

    @property
    def mart(self) -> list:
        e = self.entity
        judged = [r for r in self.rows if r.route != "deduped"]
        out = [MartRow(e.name, None, "(entity)", "(entity)", len(judged), 0, len(self.diverted), len(self.routed("deduped")))]
        for rule in e.rules:
            # every row it fired on: the judged rows, and dedupe losers for a rule judged before the dedupe (0018)
            fired = sum(1 for r in self.rows if rule.name in r.failed_rules)
            out.append(MartRow(e.name, rule.mapping, rule.name, rule.disposition, 0, fired, 0, 0))
        return out


@dataclass
class Build:
    entities: dict  # name -> EntityJudgement

    @property
    def blocked(self) -> list:
        return [s for j in self.entities.values() for s in j.blocked]

    def __getitem__(self, name: str) -> EntityJudgement:
        return self.entities[name]

    @property
    def mart(self) -> list:
        return [m for j in self.entities.values() for m in j.mart]


def reject_id(source_relation: str, srid: str) -> str:
    return hashlib.md5(f"{source_relation}|{srid}".encode("utf-8")).hexdigest()


def as_spec(spec) -> Spec:
    if isinstance(spec, Spec):
        return spec
    if isinstance(spec, (str, Path)):
        return read_spec(spec)
    raise TypeError(f"a spec directory or an oracle Spec, not {type(spec).__name__}")


def _desc_nulls_last(a: Any, b: Any) -> int:
    if a == b:
        return 0
    if a is None:
        return 1
    if b is None:
        return -1
    return -1 if a > b else 1


class Oracle:
    """Judges one build of one spec (a spec directory, read by the oracle itself)."""

    def __init__(self, spec):
        self.spec = as_spec(spec)
        self._expressions: dict = {}
        self._regexes: dict = {}
        for e in self.spec.entities:
            if not e.opted_in:
                raise Unsupported(f"entity {e.name} has not opted in to quality (produce-or-raise lowering)")
            if e.scd != "type1":
                raise Unsupported(f"entity {e.name} is {e.scd}")
            if e.materialized != "table":
                raise Unsupported(f"entity {e.name} is {e.materialized}")
            types = {c.name: c.type for c in e.columns}
            for m in e.mappings:
                for f in m.fields:
                    if len(f.path) != 1:
                        raise Unsupported(f"JSON path {f.path} in mapping {m.name}")
                    validate_chain(f.steps, types.get(f.column, "string"))
            for rule in e.rules:
                if rule.kind not in SUPPORTED_RULES:
                    raise Unsupported(f"rule kind {rule.kind} ({rule.name})")
                if rule.kind == "expression":
                    self._expressions[(e.name, rule.name)] = Expression(rule.param("expr"), types)
                if rule.kind == "pattern":
                    self._regexes[(e.name, rule.name)] = python_regex(rule.param("regex"))

    @property
    def project(self) -> Spec:  # the name callers used when this read the product's IR
        return self.spec

    def build(self, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> Build:
        bronze = {name: [dict(r) for r in rows] for name, rows in bronze.items()}
        return Build({e.name: self._judge(e, bronze) for e in self.spec.entities})

    # -- one entity
    def _judge(self, e: Entity, bronze: dict) -> EntityJudgement:
        blocked: list[str] = []
        extracted = []
        types = {c.name: c.type for c in e.columns}
        for m in e.mappings:
            rows = bronze.get(m.source)
            if rows is None:
                raise KeyError(f"no bronze relation {m.source} for mapping {m.name}")
            if e.has_ingestion_metadata:
                blocked += _ingestion_audit(m.source, rows)
            for row in rows:
                values, markers = {}, set()
                for f in m.fields:
                    produced = run_chain(row.get(f.bronze_column), f.steps, types.get(f.column, "string"))
                    values[f.column] = produced.value
                    if produced.marker:
                        markers.add(f.column)
                for c in e.columns:
                    values.setdefault(c.name, None)  # a column this mapping does not produce
                ingested = parse_timestamp(row.get("_ingested_at"))
                extracted.append((m, row, values, frozenset(markers), ingested))
        if blocked:
            # The source tests stop everything downstream: nothing below would be built.
            return EntityJudgement(e, [], blocked)

        latest = self._latest_deliveries(e, extracted)
        ranks = self._dedupe(e, extracted, latest)
        judged = [i for i in latest if ranks[i] == 1]
        counts = self._unique_counts(e, [extracted[i] for i in judged])
        staged = []
        # 001: a value that will not cast in a column the dedupe order reads leaves the winner
        # undefined, so that column's (fail) coercible rule judges every latest delivery, the
        # losers too, not only the winner (decision 0018).
        before_dedupe = [r for r in e.rules if r.kind == "coercible" and r.column in e.dedupe]
        for i, (m, row, values, markers, ingested) in enumerate(extracted):
            fired: list[str] = []
            if ranks.get(i) == 1:
                fired = [r.name for r in e.rules if self._fires(e, r, m.name, values, markers, counts)]
            elif i in latest:
                fired = [r.name for r in before_dedupe if self._fires(e, r, m.name, values, markers, counts)]
            worst = max((SEVERITY[e.rule(n).disposition] for n in fired), default=0)
            if ranks.get(i) != 1:
                route = "deduped"
            elif worst == SEVERITY["fail"]:
                route = "failed"
            elif worst == SEVERITY["quarantine"]:
                route = "quarantined"
            else:
                route = "kept"
            staged.append(Staged(e.name, m.name, m.source, row["_source_row_id"], row.get("_load_id"), ingested, values,
                                 markers, ranks.get(i), tuple(sorted(fired)), route, row, superseded=i not in latest))
        j = EntityJudgement(e, staged, blocked)
        j.blocked += self._entity_audits(e, j)
        return j

    def _latest_deliveries(self, e: Entity, extracted: list) -> set:
        """0014: per (mapping, _source_row_id) only the latest delivery is the row's current truth."""
        if not e.has_ingestion_metadata:
            return set(range(len(extracted)))
        groups: dict = {}
        for i, (m, row, _values, _markers, ingested) in enumerate(extracted):
            groups.setdefault((m.name, row["_source_row_id"]), []).append(i)

        def order(a: int, b: int) -> int:
            (_ma, ra, _va, _ka, ia), (_mb, rb, _vb, _kb, ib) = extracted[a], extracted[b]
            # a replayed delivery is the latest at its instant (decision 1100)
            replayed = (rb.get("_load_id") == "__replay__") - (ra.get("_load_id") == "__replay__")
            return _desc_nulls_last(ia, ib) or replayed or _desc_nulls_last(ra.get("_load_id"), rb.get("_load_id"))

        return {sorted(members, key=cmp_to_key(order))[0] for members in groups.values()}

    def _dedupe(self, e: Entity, extracted: list, latest: set) -> dict:
        """index -> rank among the latest deliveries of its key (superseded deliveries have none)."""
        ranks = {i: 1 for i in latest}
        if not e.dedupe:
            return ranks

        def sort_value(item, column):
            m, row, values, _markers, ingested = item
            if column == "_ingested_at":
                return ingested
            if column == "_mapping":
                return m.name
            if column in INGESTION:
                return row.get(column)
            return values.get(column)

        def compare(a, b):
            # Every key DESC NULLS LAST, so the winner is a function of the data alone.
            for column in e.dedupe:
                c = _desc_nulls_last(sort_value(extracted[a], column), sort_value(extracted[b], column))
                if c:
                    return c
            return 0

        groups: dict = {}
        for i in sorted(latest):
            key = tuple(extracted[i][2][k] for k in e.key)
            if any(v is None for v in key):
                continue  # a row with a NULL key part is partitioned alone (0003)
            groups.setdefault(key, []).append(i)
        for members in groups.values():
            for rank, i in enumerate(sorted(members, key=cmp_to_key(compare)), start=1):
                ranks[i] = rank
        return ranks

    def _unique_counts(self, e: Entity, judged: list) -> dict:
        counts: dict = {}
        for rule in e.rules:
            if rule.kind != "unique":
                continue
            tally: dict = {}
            for m, _row, values, _markers, _ing in judged:
                v = values.get(rule.column)
                if v is not None:
                    tally[v] = tally.get(v, 0) + 1
            counts[rule.name] = tally
        return counts

    def _fires(self, e: Entity, rule: Rule, mapping: str, values: dict, markers: frozenset, counts: dict) -> bool:
        if rule.mapping is not None and rule.mapping != mapping:
            return False  # field rules judge the rows of their own mapping only
        col = rule.column
        v = values.get(col) if col else None
        ctype = e.column(col).type if col else None
        kind = rule.kind
        if kind == "coercible":
            return col in markers
        if kind == "not_null":
            return v is None and col not in markers  # 0001
        if kind == "expression":
            return self._expressions[(e.name, rule.name)].holds(values) is False
        if v is None:
            return False  # NULLs belong to not_null and coercible
        if kind == "range":
            lo, hi = rule.param("min"), rule.param("max")
            cmp_v = Decimal(v) if isinstance(v, int) else v
            bound_type = "decimal(38,0)" if ctype == "int" else ctype
            if ctype == "string":
                raise Unsupported("range on a text column")
            return (lo is not None and cmp_v < _bound(lo, bound_type)) or (hi is not None and cmp_v > _bound(hi, bound_type))
        if kind == "length":
            if ctype != "string":
                raise Unsupported("length on a non-text column")
            lo, hi = rule.param("min"), rule.param("max")
            return (lo is not None and len(v) < int(lo)) or (hi is not None and len(v) > int(hi))
        if kind == "pattern":
            if ctype != "string":
                raise Unsupported("pattern on a non-text column")
            return self._regexes[(e.name, rule.name)].search(v) is None
        if kind == "in_set":
            # typed: a decimal column compares numbers (1.50 is 1.5), a date column dates, ...
            return v not in rule.param("values")
        if kind == "in_enum":
            return text_form(v, ctype) not in set(rule.param("values"))
        if kind == "unique":
            return counts[rule.name].get(v, 0) > 1
        if kind == "normalize":
            return not unicodedata.is_normalized("NFC", v)
        if kind == "charset":
            ranges = rule.param("ranges")
            inside = [any(lo <= ord(ch) <= hi for lo, hi in ranges) for ch in v]
            return any(inside) if rule.param("mode") == "forbid" else not all(inside)
        raise Unsupported(rule.kind)

    def _entity_audits(self, e: Entity, j: EntityJudgement) -> list[str]:
        out = []
        fails = sorted({n for r in j.rows for n in r.failed_rules if e.rule(n).disposition == "fail"})
        for name in fails:
            out.append(f"{e.name}: fail rule {name} fired")
        if not e.dedupe:
            seen: dict = {}
            for r in j.kept:
                key = tuple(r.values[k] for k in e.key)
                if any(v is None for v in key):
                    continue
                seen[key] = seen.get(key, 0) + 1
            for key, n in sorted(seen.items(), key=repr):
                if n > 1:
                    out.append(f"{e.name}: key {key!r} kept {n} times")
        return out


def _bound(value: Any, type_name: str):
    if type_name == "timestamp":
        return typed_literal(value, "timestamp")
    if type_name == "date":
        return typed_literal(value, "date")
    if re.fullmatch(r"decimal\([0-9]+,[0-9]+\)", type_name):
        return typed_literal(value, type_name)
    raise Unsupported(f"range on a {type_name} column")


def _ingestion_audit(source: str, rows: list) -> list[str]:
    """NULL metadata, a `_source_row_id` repeated within one `_load_id`, an `_ingested_at` that is
    not a timestamp. A repeat across loads is a re-delivery, not corruption (0014)."""
    out, seen = [], set()
    for row in rows:
        for col in INGESTION:
            if row.get(col) is None:
                out.append(f"{source}: NULL {col}")
        srid, load = row.get("_source_row_id"), row.get("_load_id")
        if srid is not None and load is not None:
            if (load, srid) in seen:
                out.append(f"{source}: _source_row_id {srid!r} repeats within _load_id {load!r}")
            seen.add((load, srid))
        if row.get("_ingested_at") is not None and parse_timestamp(row["_ingested_at"]) is None:
            out.append(f"{source}: _ingested_at {row['_ingested_at']!r} is not a timestamp")
    return out
