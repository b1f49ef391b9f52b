"""Values: casting text to assay types, transform chains, typed comparisons, patterns, expressions.

Every judgement about a single value is made here, from reference 001, pipeline.md and decision
0300; nothing is read from the product. Where the contract leaves a value to the engine the
functions raise `Undefined`; a construct not modelled raises `Unsupported`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Optional


class Undefined(Exception):
    """The contract leaves this input's outcome to the engine; a test must not depend on it."""


class Unsupported(Exception):
    """The spec uses something this oracle does not model (or a spec the product must refuse)."""


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
SCALAR_TYPES = ("string", "int", "date", "timestamp")


def normalize_type(text: str) -> str:
    return str(text).replace(" ", "").lower()


def decimal_shape(type_name: str) -> Optional[tuple[int, int]]:
    m = _DECIMAL_TYPE.fullmatch(normalize_type(type_name))
    return (int(m.group(1)), int(m.group(2))) if m else None


def is_modelled_type(type_name: str) -> bool:
    return type_name in SCALAR_TYPES or decimal_shape(type_name) is not None


class _Failed:
    """A cast that did not convert: the value becomes NULL and the column's marker is set."""

    def __repr__(self) -> str:
        return "FAILED"


FAILED = _Failed()


def _parse_int(text: str):
    if _INT_TEXT.fullmatch(text):
        n = int(text)
        return n if INT64[0] <= n <= INT64[1] else FAILED
    if _INTISH.fullmatch(text):
        raise Undefined(f"integer text the contract does not pin: {text!r}")
    return FAILED  # "only integer text converts": 1.5 included


def fit_decimal(value: Decimal, precision: int, scale: int):
    # Half away from zero is what "rounds to the scale" means on every shipped engine's decimal cast.
    rounded = value.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    if abs(rounded) >= Decimal(10) ** (precision - scale):
        return FAILED
    return rounded + 0  # folds -0.00 into 0.00, as a decimal column stores it


def _parse_decimal(text: str, precision: int, scale: int):
    if _DECIMAL_TEXT.fullmatch(text):
        return fit_decimal(Decimal(text), precision, scale)
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
        value -= sign * dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
    return value


def cast_text(text: str, type_name: str):
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
    shape = decimal_shape(type_name)
    if shape:
        return _parse_decimal(text, *shape)
    raise Unsupported(f"casting text to {type_name}")


def cast(value: Any, from_type: str, to_type: str):
    if value is None or from_type == to_type:
        return value
    if from_type == "string":
        return cast_text(value, to_type)
    src, dst = decimal_shape(from_type), decimal_shape(to_type)
    if dst and (src or from_type == "int"):
        return fit_decimal(Decimal(value), *dst)
    if to_type == "string" and from_type in ("date", "int"):
        return text_form(value, from_type)
    raise Unsupported(f"casting {from_type} to {to_type}")


def text_form(value: Any, type_name: str) -> Optional[str]:
    """How a typed value reads as text (`to_string` of a typed value)."""
    if value is None:
        return None
    if isinstance(value, Decimal):
        shape = decimal_shape(type_name)
        return format(value, "f") if shape is None else format(value.quantize(Decimal(1).scaleb(-shape[1])), "f")
    if isinstance(value, dt.datetime):
        raise Undefined("the text form of a timestamp is engine-specific")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def yaml_text(value: Any) -> str:
    """A YAML scalar of the spec as the text it names (`true`, not Python's `True`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def typed_literal(value: Any, type_name: str):
    """A spec literal (an in_set value, a range bound) read as a value of the column's type.

    Raises Unsupported when no value of the type can equal it: the product refuses such a spec.
    """
    if type_name in ("string", "variant"):
        return yaml_text(value)
    if type_name == "bool":
        if isinstance(value, bool):
            return value
        raise Unsupported(f"{value!r} is not a bool value")
    if isinstance(value, bool):
        raise Unsupported(f"{value!r} is not a {type_name} value")
    text = str(value)
    if type_name == "int":
        if isinstance(value, int) or _INT_TEXT.fullmatch(text):
            return int(text)
        raise Unsupported(f"{value!r} is not an int value")
    if decimal_shape(type_name):
        if isinstance(value, (int, float)) or _DECIMAL_TEXT.fullmatch(text):
            return Decimal(text)
        raise Unsupported(f"{value!r} is not a decimal value")
    if type_name == "date":
        m = _DATE_TEXT.fullmatch(text)
        if m:
            return dt.date.fromisoformat(text)
        raise Unsupported(f"{value!r} is not a date")
    if type_name == "timestamp":
        got = parse_timestamp(text)
        if got is None:
            raise Unsupported(f"{value!r} is not a timestamp")
        return got
    raise Unsupported(f"a literal of type {type_name}")


def check_case_mapping(text: str) -> None:
    if not text.isascii():
        raise Undefined(f"case mapping of non-ASCII text is engine-specific: {text!r}")


# Unicode's White_Space property, read from the Unicode Character Database (PropList.txt), which
# decision 0960 makes what `trim` removes. Python's str.isspace differs (it includes U+001C-U+001F).
WHITE_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def trim(text: str) -> str:
    return text.strip(WHITE_SPACE)


# --------------------------------------------------------------------------- chains

CASTS = {"to_int", "to_decimal", "parse_date", "parse_ts"}
TEXT_STEPS = {"trim", "upper", "lower", "to_string", "enum_map", "strip_prefix", "strip_suffix", "concat",
              "coalesce", "nullif"}
MODELLED_STEPS = CASTS | TEXT_STEPS


@dataclass(frozen=True)
class Produced:
    value: Any
    marker: bool  # some casting step turned a non-NULL input into NULL


def run_chain(raw: Optional[str], steps, target_type: str) -> Produced:
    """The bronze text through a transform chain and the final cast to the field's type."""
    value: Any = raw
    current = "string"
    marker = False

    def casted(result):
        nonlocal marker
        if result is FAILED:
            marker = True
            return None
        return result

    for name, args in steps:
        if name in TEXT_STEPS and name != "to_string" and current != "string":
            raise Unsupported(f"{name} on a {current} value")
        if name == "to_string":
            value = text_form(value, current)
            current = "string"
        elif name in ("coalesce", "nullif"):
            literal = yaml_text(args[0])
            if name == "coalesce":
                value = literal if value is None else value
            elif value == literal:
                value = None  # on purpose: no marker
        elif value is None:
            pass
        elif name == "trim":
            value = trim(value)
        elif name in ("upper", "lower"):
            check_case_mapping(value)
            value = value.upper() if name == "upper" else value.lower()
        elif name == "enum_map":
            pairs = dict(zip((yaml_text(a) for a in args[0::2]), (yaml_text(a) for a in args[1::2])))
            value = pairs.get(value, value)
        elif name == "strip_prefix":
            p = yaml_text(args[0])
            value = value[len(p):] if p and value.startswith(p) else value
        elif name == "strip_suffix":
            s = yaml_text(args[0])
            value = value[: -len(s)] if s and value.endswith(s) else value
        elif name == "concat":
            value = value + yaml_text(args[0])
        if name == "to_int":
            value, current = (casted(cast(value, current, "int")) if value is not None else None), "int"
        elif name == "to_decimal":
            target = f"decimal({args[0]},{args[1]})"
            value, current = (casted(cast(value, current, target)) if value is not None else None), target
        elif name == "parse_date":
            value, current = (casted(cast(value, current, "date")) if value is not None else None), "date"
        elif name == "parse_ts":
            value, current = (casted(cast(value, current, "timestamp")) if value is not None else None), "timestamp"
    if value is not None:
        if current == "string" and target_type in ("date", "timestamp") and isinstance(value, str):
            # the bare cast into a date or timestamp field reads the text with the spaces around it
            # trimmed; any other white space is no date (docs/spec.md; parse_date / parse_ts are strict)
            value = FAILED if any(c in value for c in "\t\n\x0b\x0c\r") else value.strip(" ")
        value = casted(value if value is FAILED else cast(value, current, target_type))
    return Produced(value, marker)


def validate_chain(steps, target_type: str) -> None:
    """Fail when the oracle is built, not on the first row that reaches an unmodelled step."""
    for name, args in steps:
        if name not in MODELLED_STEPS:
            raise Unsupported(f"transform {name}")
        if name in ("parse_date", "parse_ts") and tuple(args) != ("ISO8601",):
            raise Unsupported(f"{name} format {args!r}")
    if not is_modelled_type(target_type):
        raise Unsupported(f"column type {target_type}")


# --------------------------------------------------------------------------- patterns


def python_regex(pattern: str) -> re.Pattern:
    """The portable subset read by Python `re` the way RE2 reads it (decision 0300).

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


# --------------------------------------------------------------------------- expressions

_EXPR = re.compile(
    r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<>|!=|=|<|>)\s*"
    r"([A-Za-z_][A-Za-z0-9_]*|-?[0-9]+(?:\.[0-9]+)?|'(?:[^']|'')*')\s*"
)
_EXPR_NULL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s+IS\s+(NOT\s+)?NULL\s*", re.IGNORECASE)


class Expression:
    """`<col> <op> <col or literal>` or `<col> IS [NOT] NULL`, in SQL's three-valued logic."""

    def __init__(self, text: str, types: dict):
        self.text = text
        self.types = types
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
            value = literal if left_type == "string" else cast_text(literal, left_type)
            if value is FAILED:
                raise Unsupported(f"literal {literal!r} against a {left_type} column in {text!r}")
            self.right = ("literal", value)
        elif right[0].isdigit() or right[0] == "-":
            if not (left_type == "int" or decimal_shape(left_type)):
                raise Unsupported(f"numeric literal against a {left_type} column in {text!r}")
            self.right = ("literal", Decimal(right))
        else:
            self._column(right)
            right_type = self.types[right]
            numeric = {left_type, right_type} <= {"int"} | {t for t in (left_type, right_type) if decimal_shape(t)}
            if left_type != right_type and not numeric:
                raise Unsupported(f"comparing {left_type} with {right_type} in {text!r}")
            self.right = ("column", right)

    def _column(self, name: str) -> None:
        if name not in self.types:
            raise Unsupported(f"expression {self.text!r} names {name!r}, not a column")

    def holds(self, values: dict) -> Optional[bool]:
        """True, False, or None for SQL UNKNOWN."""
        left = values.get(self.left)
        if self.kind == "null":
            return (left is not None) if self.negated else (left is None)
        kind, ref = self.right
        right = values.get(ref) if kind == "column" else ref
        if left is None or right is None:
            return None
        if isinstance(left, int) and not isinstance(left, bool):
            left = Decimal(left)
        if isinstance(right, int) and not isinstance(right, bool):
            right = Decimal(right)
        return {
            "=": left == right, "<>": left != right, "!=": left != right,
            "<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right,
        }[self.op]
