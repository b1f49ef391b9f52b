"""An independent, pure-Python account of what `dbt build` must do to every bronze row.

Written from reference 001 and docs/internals/pipeline.md, never from the generated SQL: the
point is that agreement between this module and the warehouse is evidence, which it would not
be if both were transcriptions of the same code. It reads the IR (`assay.api.load_project`)
only for what the spec *declares* (columns, mappings, chains, rule names, dispositions, the
dedupe order); every judgement about a value is made here.

Where the contract leaves a value to the engine (whitespace around a number, `1e3`, a leading
`+`, non-ASCII case mapping, ...) the oracle raises `Undefined` instead of guessing, so a test
that feeds it such a value fails loudly rather than encoding one engine's opinion. A spec
construct it does not model raises `Unsupported` when the oracle is built.

Three layers:
- `Oracle(project).build(bronze)` judges one build, statelessly: staged rows with their rank,
  fired rules and route, and the mart rows of that run.
- `RejectLedger.apply(build, n)` carries the reject table across builds (identity, sticky
  first_seen, last_seen, reopening, resolution, never deleting).
- `Warehouse` strings the two together the way successive `dbt build`s do, and lets a test
  swap the spec between builds (a rule change) while the ledger survives.

Not modelled (construction raises `Unsupported`, or the caller must not rely on it): referential
rules, coverage and reconcile; type-2 and not-opted-in entities; incremental entities; JSON paths
into a bronze column; transforms other than trim/upper/lower/to_string/enum_map/to_int/
to_decimal/parse_date and parse_ts with ISO8601; expressions beyond `<col> <op> <col|literal>`
and `<col> IS [NOT] NULL`; redaction; replay and retention; what a blocked build (a failing
audit) leaves behind, which the ledger refuses to guess; the values of resolved_at,
last_evaluated_at, run_id and run_date (only which build resolved a row).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from functools import cmp_to_key
from typing import Any, Iterable, Mapping, Optional

from assay.ir.model import SEVERITY, Entity, Project, Rule

__all__ = [
    "Undefined",
    "Unsupported",
    "Staged",
    "MartRow",
    "EntityJudgement",
    "Build",
    "RejectRow",
    "RejectLedger",
    "Oracle",
    "Warehouse",
    "reject_id",
    "parse_timestamp",
]

INGESTION = ("_load_id", "_ingested_at", "_source_row_id")


class Undefined(Exception):
    """The contract leaves this input's outcome to the engine; a test must not depend on it."""


class Unsupported(Exception):
    """The spec uses something this oracle does not model."""


# --------------------------------------------------------------------------- values

_INT_TEXT = re.compile(r"-?[0-9]+")
_DECIMAL_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
# Text an engine might still read as a number: the contract pins none of these spellings.
_NUMBERISH = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")
_INTISH = re.compile(r"\s*[+-]?[0-9]+(?:[eE][+-]?[0-9]+)?\s*")
_DATE_TEXT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME_TEXT = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:?[0-9]{2}|[+-][0-9]{2})?"
)
INT64 = (-(2**63), 2**63 - 1)
_DECIMAL_TYPE = re.compile(r"decimal\(([0-9]+),([0-9]+)\)")


def _decimal_shape(type_name: str) -> Optional[tuple[int, int]]:
    m = _DECIMAL_TYPE.fullmatch(type_name.replace(" ", ""))
    return (int(m.group(1)), int(m.group(2))) if m else None


class _Failed:
    """A cast that did not convert: the value becomes NULL and the column's marker is set."""


FAILED = _Failed()


def _parse_int(text: str):
    if _INT_TEXT.fullmatch(text):
        n = int(text)
        return n if INT64[0] <= n <= INT64[1] else FAILED
    if _INTISH.fullmatch(text):
        raise Undefined(f"integer text the contract does not pin: {text!r}")
    return FAILED  # "only integer text converts": 1.5 included


def _fit_decimal(value: Decimal, precision: int, scale: int):
    # Half away from zero is what "rounds to the scale" means on every shipped engine's decimal cast.
    rounded = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if abs(rounded) >= Decimal(10) ** (precision - scale):
        return FAILED
    return rounded + 0  # folds -0.00 into 0.00, as a decimal column stores it


def _parse_decimal(text: str, precision: int, scale: int):
    if _DECIMAL_TEXT.fullmatch(text):
        return _fit_decimal(Decimal(text), precision, scale)
    if _NUMBERISH.fullmatch(text):
        raise Undefined(f"decimal text the contract does not pin: {text!r}")
    return FAILED


def _parse_date(text: str):
    m = _DATE_TEXT.fullmatch(text)
    if m:
        try:
            return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        except ValueError:
            return FAILED
    if _DATETIME_TEXT.fullmatch(text):
        # Which calendar day an instant with an offset belongs to is not pinned for parse_date.
        raise Undefined(f"a timestamp given to parse_date: {text!r}")
    return FAILED


def parse_timestamp(text: Optional[str]) -> Optional[dt.datetime]:
    """ISO 8601 date-time to a naive UTC datetime; None when it does not parse."""
    if text is None:
        return None
    m = _DATETIME_TEXT.fullmatch(text)
    if not m:
        if _DATE_TEXT.fullmatch(text):
            raise Undefined(f"a bare date read as a timestamp: {text!r}")
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7)
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    try:
        value = dt.datetime(y, mo, d, h, mi, s, micro)
    except ValueError:
        return None
    zone = m.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
        value -= sign * offset
    return value


def _cast_text(text: str, type_name: str):
    """A text value to an assay type, by the engine-neutral reading of the contract."""
    if type_name == "string":
        return text
    if type_name == "int":
        return _parse_int(text)
    if type_name == "date":
        return _parse_date(text)
    if type_name == "timestamp":
        value = parse_timestamp(text)
        return FAILED if value is None else value
    shape = _decimal_shape(type_name)
    if shape:
        return _parse_decimal(text, *shape)
    raise Unsupported(f"casting text to {type_name}")


def _cast(value: Any, from_type: str, to_type: str):
    if value is None or from_type == to_type:
        return value
    if from_type == "string":
        return _cast_text(value, to_type)
    src, dst = _decimal_shape(from_type), _decimal_shape(to_type)
    if dst and (src or from_type == "int"):
        return _fit_decimal(Decimal(value), *dst)
    if from_type == "date" and to_type == "string":
        return value.isoformat()
    raise Unsupported(f"casting {from_type} to {to_type}")


def text_form(value: Any, type_name: str) -> Optional[str]:
    """How a typed value reads as text: what in_set / in_enum compare."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        shape = _decimal_shape(type_name)
        return format(value, "f") if shape is None else format(value.quantize(Decimal(1).scaleb(-shape[1])), "f")
    if isinstance(value, dt.datetime):
        raise Undefined("the text form of a timestamp is engine-specific")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def _check_case_mapping(text: str) -> None:
    if not text.isascii():
        raise Undefined(f"case mapping of non-ASCII text is engine-specific: {text!r}")


def _trim(text: str) -> str:
    out = text.strip(" ")
    if out and (out[0].isspace() or out[-1].isspace()):
        raise Undefined(f"whether trim removes non-space white space is engine-specific: {text!r}")
    return out


# --------------------------------------------------------------------------- chains


@dataclass(frozen=True)
class _Produced:
    value: Any
    marker: bool  # some casting step turned a non-NULL input into NULL


def _run_chain(raw: Optional[str], steps, target_type: str) -> _Produced:
    value: Any = raw
    current = "string"
    marker = False

    def casted(result):
        nonlocal marker
        if result is FAILED:
            marker = True
            return None
        return result

    for step in steps:
        name, args = step.name, step.args
        if name in ("trim", "upper", "lower", "to_string"):
            if current != "string" and name != "to_string":
                raise Unsupported(f"{name} on a {current} value")
            if value is not None:
                if name == "to_string":
                    value = text_form(value, current)
                elif name == "trim":
                    value = _trim(value)
                else:
                    _check_case_mapping(value)
                    value = value.upper() if name == "upper" else value.lower()
            current = "string"
        elif name == "enum_map":
            if current != "string":
                raise Unsupported("enum_map on a non-text value")
            pairs = dict(zip((str(a) for a in args[0::2]), (str(a) for a in args[1::2])))
            value = pairs.get(value, value) if value is not None else None
        elif name == "to_int":
            value = casted(_cast(value, current, "int")) if value is not None else None
            current = "int"
        elif name == "to_decimal":
            target = f"decimal({args[0]},{args[1]})"
            value = casted(_cast(value, current, target)) if value is not None else None
            current = target
        elif name == "parse_date":
            if args != ("ISO8601",):
                raise Unsupported(f"parse_date format {args!r}")
            value = casted(_cast(value, current, "date")) if value is not None else None
            current = "date"
        elif name == "parse_ts":
            if args != ("ISO8601",):
                raise Unsupported(f"parse_ts format {args!r}")
            value = casted(_cast(value, current, "timestamp")) if value is not None else None
            current = "timestamp"
        else:
            raise Unsupported(f"transform {name}")
    if value is not None:
        value = casted(_cast(value, current, target_type))
    return _Produced(value, marker)


def _validate_chain(steps, target_type: str) -> None:
    """Fail at construction, not on the first row that happens to reach an unmodelled step."""
    known = {"trim", "upper", "lower", "to_string", "enum_map", "to_int", "to_decimal", "parse_date", "parse_ts"}
    for step in steps:
        if step.name not in known:
            raise Unsupported(f"transform {step.name}")
        if step.name in ("parse_date", "parse_ts") and step.args != ("ISO8601",):
            raise Unsupported(f"{step.name} format {step.args!r}")
    if not (target_type in ("string", "int", "date", "timestamp") or _decimal_shape(target_type)):
        raise Unsupported(f"column type {target_type}")


# --------------------------------------------------------------------------- rules


def _python_regex(pattern: str) -> re.Pattern:
    """The portable subset read by Python `re` the way RE2 reads it.

    `$` outside a class becomes `\\Z`: Python's `$` also matches before a final newline, RE2's
    does not. re.ASCII makes `\\d \\w \\s` ASCII, as on RE2.
    """
    out, i, in_class = [], 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if ch == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                out.append("[^")
                i += 2
                continue
            out.append(ch)
        elif ch == "$":
            out.append(r"\Z")
        else:
            out.append(ch)
        i += 1
    return re.compile("".join(out), re.ASCII)


_EXPR = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<>|!=|=|<|>)\s*"
    r"([A-Za-z_][A-Za-z0-9_]*|-?[0-9]+(?:\.[0-9]+)?|'(?:[^']|'')*')\s*"
)
_EXPR_NULL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+IS\s+(NOT\s+)?NULL\s*", re.IGNORECASE)


class _Expression:
    """`<col> <op> <col or literal>` or `<col> IS [NOT] NULL`, in SQL's three-valued logic."""

    def __init__(self, text: str, entity: Entity):
        self.text = text
        self.types = {c.name: c.type for c in entity.columns}
        m = _EXPR_NULL.fullmatch(text)
        if m:
            self.kind, self.left, self.negated = "null", m.group(1), bool(m.group(2))
            self._column(self.left)
            return
        m = _EXPR.fullmatch(text)
        if not m:
            raise Unsupported(f"expression {text!r}")
        self.kind, self.left, self.op, right = "cmp", m.group(1), m.group(2), m.group(3)
        self._column(self.left)
        left_type = self.types[self.left]
        if right.startswith("'"):
            literal = right[1:-1].replace("''", "'")
            self.right = ("literal", _cast_text(literal, left_type) if left_type != "string" else literal)
        elif right[0].isdigit() or right[0] == "-":
            if not (left_type == "int" or _decimal_shape(left_type)):
                raise Unsupported(f"numeric literal against a {left_type} column in {text!r}")
            self.right = ("literal", Decimal(right))
        else:
            self._column(right)
            self.right = ("column", right)

    def _column(self, name: str) -> None:
        if name not in self.types:
            raise Unsupported(f"expression {self.text!r} reads {name!r}, not a column of the entity")

    def holds(self, values: Mapping[str, Any]) -> Optional[bool]:
        left = values.get(self.left)
        if self.kind == "null":
            return (left is not None) if self.negated else (left is None)
        right = values.get(self.right[1]) if self.right[0] == "column" else self.right[1]
        if left is None or right is None:
            return None
        if isinstance(left, int) and not isinstance(left, bool):
            left = Decimal(left)
        if isinstance(right, int) and not isinstance(right, bool):
            right = Decimal(right)
        if type(left) is not type(right):
            raise Unsupported(f"comparing {type(left).__name__} with {type(right).__name__} in {self.text!r}")
        return {
            "=": left == right,
            "<>": left != right,
            "!=": left != right,
            "<": left < right,
            "<=": left <= right,
            ">": left > right,
            ">=": left >= right,
        }[self.op]


SUPPORTED_RULES = ("coercible", "not_null", "range", "length", "pattern", "in_set", "in_enum", "unique", "expression", "normalize", "charset")


def _bound(text: Any, type_name: str):
    if type_name == "int" or _decimal_shape(type_name):
        return Decimal(str(text))
    if type_name == "date":
        return dt.date.fromisoformat(str(text))
    if type_name == "timestamp":
        return parse_timestamp(str(text))
    raise Unsupported(f"range on a {type_name} column")


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Staged:
    """One bronze row after extract, transform, dedupe, rules and route."""

    entity: str
    mapping: str
    source: str
    srid: str
    load_id: str
    ingested_at: dt.datetime
    values: dict  # entity column -> typed value (None for NULL or a failed cast)
    markers: frozenset  # columns whose chain failed to cast
    rank: int
    failed_rules: tuple  # sorted names of the rules that fired
    route: str  # kept | quarantined | failed | deduped
    bronze: dict  # the bronze row as delivered (text or None per column)


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
    def mart(self) -> list:
        e = self.entity
        rank1 = [r for r in self.rows if r.route != "deduped"]
        out = [
            MartRow(e.name, None, "(entity)", "(entity)", len(rank1), 0, len(self.diverted), len(self.routed("deduped")))
        ]
        for rule in e.rules:
            fired = sum(1 for r in rank1 if rule.name in r.failed_rules)
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


# --------------------------------------------------------------------------- the oracle


class Oracle:
    """Judges one build of one spec."""

    def __init__(self, project: Project):
        self.project = project
        self._expressions: dict[tuple[str, str], _Expression] = {}
        self._regexes: dict[tuple[str, str], re.Pattern] = {}
        for e in project.entities:
            if not e.opted_in:
                raise Unsupported(f"entity {e.name} has not opted in to quality (produce-or-raise lowering)")
            if e.scd != "type1":
                raise Unsupported(f"entity {e.name} is {e.scd}")
            for m in e.mappings:
                for f in m.fields:
                    if len(f.path) != 1:
                        raise Unsupported(f"JSON path {f.path} in mapping {m.name}")
                    _validate_chain(f.steps, e.column(f.column).type)
            for rule in e.rules:
                if rule.kind not in SUPPORTED_RULES:
                    raise Unsupported(f"rule kind {rule.kind} ({rule.name})")
                if rule.kind == "expression":
                    self._expressions[(e.name, rule.name)] = _Expression(rule.param("expr"), e)
                if rule.kind == "pattern":
                    self._regexes[(e.name, rule.name)] = _python_regex(rule.param("regex"))

    # -- one build
    def build(self, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> Build:
        bronze = {name: [dict(r) for r in rows] for name, rows in bronze.items()}
        return Build({e.name: self._judge(e, bronze) for e in self.project.entities})

    def _judge(self, e: Entity, bronze: dict) -> EntityJudgement:
        blocked: list[str] = []
        extracted = []
        for m in e.mappings:
            rows = bronze.get(m.source)
            if rows is None:
                raise KeyError(f"no bronze relation {m.source} for mapping {m.name}")
            blocked += _ingestion_audit(m.source, rows)
            for row in rows:
                values, markers = {}, set()
                for f in m.fields:
                    produced = _run_chain(row.get(f.bronze_column), f.steps, e.column(f.column).type)
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

        ranks = self._dedupe(e, extracted)
        rank1 = [i for i, rank in enumerate(ranks) if rank == 1]
        counts = self._unique_counts(e, [extracted[i] for i in rank1])
        staged = []
        for i, (m, row, values, markers, ingested) in enumerate(extracted):
            fired: list[str] = []
            if ranks[i] == 1:
                fired = [r.name for r in e.rules if self._fires(e, r, m.name, values, markers, counts)]
            worst = max((SEVERITY[rule.disposition] for rule in e.rules if rule.name in fired), default=0)
            route = (
                "deduped"
                if ranks[i] > 1
                else "failed" if worst == SEVERITY["fail"] else "quarantined" if worst == SEVERITY["quarantine"] else "kept"
            )
            staged.append(
                Staged(
                    e.name, m.name, m.source, row["_source_row_id"], row["_load_id"], ingested,
                    values, markers, ranks[i], tuple(sorted(fired)), route, row,
                )
            )
        j = EntityJudgement(e, staged, blocked)
        j.blocked += self._entity_audits(e, j)
        return j

    def _dedupe(self, e: Entity, extracted: list) -> list[int]:
        if not e.dedupe:
            return [1] * len(extracted)

        def sort_value(item, column):
            _m, row, values, _markers, ingested = item
            if column == "_ingested_at":
                return ingested
            if column in INGESTION:
                return row.get(column)
            return values.get(column)

        def compare(a, b):
            # Every key DESC NULLS LAST, so the winner is a function of the data alone.
            for key in e.dedupe:
                va, vb = sort_value(extracted[a], key.column), sort_value(extracted[b], key.column)
                if va == vb:
                    continue
                if va is None:
                    return 1
                if vb is None:
                    return -1
                return -1 if va > vb else 1
            return 0

        groups: dict[tuple, list[int]] = {}
        ranks = [1] * len(extracted)
        for i, item in enumerate(extracted):
            key = tuple(item[2][k] for k in e.key)
            if any(v is None for v in key):
                continue  # a row with a NULL key part is partitioned alone
            groups.setdefault(key, []).append(i)
        for members in groups.values():
            for rank, i in enumerate(sorted(members, key=cmp_to_key(compare)), start=1):
                ranks[i] = rank
        return ranks

    def _unique_counts(self, e: Entity, rank1: list) -> dict:
        counts: dict[str, dict] = {}
        for rule in e.rules_of_kind("unique"):
            tally: dict = {}
            for _m, _row, values, _markers, _ing in rank1:
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
            return v is None and col not in markers
        if kind == "expression":
            return self._expressions[(e.name, rule.name)].holds(values) is False
        if v is None:
            return False  # NULLs belong to not_null and coercible
        if kind == "range":
            lo, hi = rule.param("min"), rule.param("max")
            cmp_v = Decimal(v) if isinstance(v, int) else v
            return (lo is not None and cmp_v < _bound(lo, ctype)) or (hi is not None and cmp_v > _bound(hi, ctype))
        if kind == "length":
            if ctype != "string":
                raise Unsupported("length on a non-text column")
            lo, hi = rule.param("min"), rule.param("max")
            return (lo is not None and len(v) < int(lo)) or (hi is not None and len(v) > int(hi))
        if kind == "pattern":
            if ctype != "string":
                raise Unsupported("pattern on a non-text column")
            return self._regexes[(e.name, rule.name)].search(v) is None
        if kind in ("in_set", "in_enum"):
            return text_form(v, ctype) not in {str(x) for x in rule.param("values")}
        if kind == "unique":
            return counts[rule.name].get(v, 0) > 1
        if kind == "normalize":
            return not unicodedata.is_normalized("NFC", v)
        if kind == "charset":
            ranges = [tuple(r) for r in rule.param("ranges")]
            inside = [any(lo <= ord(ch) <= hi for lo, hi in ranges) for ch in v]
            return any(inside) if rule.param("mode") == "forbid" else not all(inside)
        raise Unsupported(rule.kind)

    def _entity_audits(self, e: Entity, j: EntityJudgement) -> list[str]:
        out = []
        fails = sorted({n for r in j.rows for n in r.failed_rules if _disposition(e, n) == "fail"})
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


def _disposition(e: Entity, name: str) -> str:
    for r in e.rules:
        if r.name == name:
            return r.disposition
    raise KeyError(name)


def _ingestion_audit(source: str, rows: list) -> list[str]:
    out, seen = [], set()
    for row in rows:
        for col in INGESTION:
            if row.get(col) is None:
                out.append(f"{source}: NULL {col}")
        srid = row.get("_source_row_id")
        if srid is not None:
            if srid in seen:
                out.append(f"{source}: _source_row_id {srid!r} repeats")
            seen.add(srid)
        if row.get("_ingested_at") is not None and parse_timestamp(row["_ingested_at"]) is None:
            out.append(f"{source}: _ingested_at {row['_ingested_at']!r} is not a timestamp")
    return out


# --------------------------------------------------------------------------- the reject table


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
    raw: dict
    resolved_in: Optional[int] = None  # the build that resolved it
    resolution: Optional[str] = None  # admitted | deduped

    @property
    def open(self) -> bool:
        return self.resolved_in is None


@dataclass
class RejectLedger:
    rows: dict = field(default_factory=dict)  # reject_id -> RejectRow

    def apply(self, build: Build, build_no: int) -> None:
        if build.blocked:
            raise ValueError(f"a blocked build is not modelled: {build.blocked}")
        for name, j in build.entities.items():
            e = j.entity
            for r in j.rows:
                rid = reject_id(r.source, r.srid)
                if r.route in ("quarantined", "failed"):
                    previous = self.rows.get(rid)
                    self.rows[rid] = RejectRow(
                        rid, name, r.mapping, r.source, r.srid, r.load_id,
                        # first_seen says when the problem started: a re-delivery never moves it.
                        previous.first_seen if previous else r.ingested_at,
                        r.ingested_at,
                        r.failed_rules,
                        "fail" if r.route == "failed" else "quarantine",
                        {k: r.values[k] for k in e.key},
                        dict(r.bronze),
                    )
                elif rid in self.rows and self.rows[rid].open:
                    self.rows[rid] = replace(
                        self.rows[rid], resolved_in=build_no, resolution="admitted" if r.route == "kept" else "deduped"
                    )

    def of(self, entity: str) -> list:
        return sorted((r for r in self.rows.values() if r.entity == entity), key=lambda r: (r.source_relation, r.srid))

    def open_ids(self, entity: str) -> set:
        return {(r.source_relation, r.srid) for r in self.of(entity) if r.open}


class Warehouse:
    """Successive builds of one bronze history: what the warehouse must hold after each."""

    def __init__(self, project: Project):
        self.oracle = Oracle(project)
        self.ledger = RejectLedger()
        self.builds: list[Build] = []

    def respec(self, project: Project) -> None:
        """A spec change between builds: new rules, same reject history."""
        self.oracle = Oracle(project)

    def build(self, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> Build:
        result = self.oracle.build(bronze)
        self.builds.append(result)
        self.ledger.apply(result, len(self.builds))
        return result


# --------------------------------------------------------------------------- comparing with a warehouse
#
# Both sides are reduced to the same plain shapes so a failing assertion prints a readable diff.
# `query` is any callable running SQL and returning tuples (DbtProject.query).


def _plain_key_value(v: Any) -> Any:
    if isinstance(v, (Decimal, dt.date)):
        raise Undefined("the JSON spelling of a decimal or temporal key value is engine-specific")
    return v


def expected_state(wh: Warehouse, build: Build) -> dict:
    """What the warehouse must hold after `build`, the latest build of `wh`."""
    state: dict = {"entity": {}, "staged": {}, "reject": {}, "mart": sorted(astuple_mart(m) for m in build.mart)}
    for name, j in build.entities.items():
        e = j.entity
        state["entity"][name] = sorted(
            (r.mapping, r.srid, *(r.values[c.name] for c in e.columns), r.load_id, r.ingested_at, r.failed_rules, not r.failed_rules)
            for r in j.kept
        )
        state["staged"][name] = sorted((r.mapping, r.srid, r.rank, r.route, r.failed_rules) for r in j.rows)
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
    return (m.entity, m.mapping or "", m.rule, m.disposition, m.rows_evaluated, m.rows_failed, m.rows_quarantined, m.rows_deduped)


def _names(value: Any) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v for v in value.split(",") if v)
    return tuple(value)


def observed_state(query, project: Project, run_id: str, silver: str = "silver", gold: str = "gold") -> dict:
    """The same shapes as `expected_state`, read back from the warehouse."""
    import json

    state: dict = {"entity": {}, "staged": {}, "reject": {}}
    for e in project.entities:
        cols = ", ".join(f'"{c.name}"' for c in e.columns)
        state["entity"][e.name] = sorted(
            (r[0], r[1], *r[2:-4], r[-4], r[-3], _names(r[-2]), r[-1])
            for r in query(
                f'select _mapping, _source_row_id, {cols}, _load_id, _ingested_at, _quality_flags, _quality_ok '
                f'from {silver}."{e.name}"'
            )
        )
        state["staged"][e.name] = sorted(
            (r[0], r[1], r[2], r[3], _names(r[4]))
            for r in query(f'select _mapping, _source_row_id, _dedupe_rank, _route, _failed_rules from {silver}."{e.name}__staged"')
        )
        state["reject"][e.name] = sorted(
            (*r[:8], _names(r[8]), r[9], json.loads(r[10]), json.loads(r[11]), r[12] is None, r[13])
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


def placements(query, project: Project, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]], silver: str = "silver") -> dict:
    """(entity, source relation, _source_row_id) -> the places the row is found in.

    Read from the warehouse alone, so the conservation law is checked without the oracle's help.
    """
    places: dict = {}
    for e in project.entities:
        source_of = {m.name: m.source for m in e.mappings}
        for m in e.mappings:
            for row in bronze[m.source]:
                places[(e.name, m.source, row["_source_row_id"])] = []
        found = [("entity", source_of.get(mp, mp), s) for mp, s in query(f'select _mapping, _source_row_id from {silver}."{e.name}"')]
        found += [("reject", src, s) for src, s in query(
            f'select source_relation, _source_row_id from {silver}."{e.name}__reject" where resolved_at is null')]
        found += [("deduped", source_of.get(mp, mp), s) for mp, s in query(
            f"select _mapping, _source_row_id from {silver}.\"{e.name}__staged\" where _route = 'deduped'")]
        for place, src, srid in found:
            places.setdefault((e.name, src, srid), []).append(place)
    return places
