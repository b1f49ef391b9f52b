"""The closed set of transforms a mapping field may chain.

Each transform is described as data: the arguments it takes, the type it
produces, and whether it can fail on a value (a cast) or produces NULL on
purpose. Lowering and validation both read this table; neither spells a
transform's rules a second time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Optional


@dataclass(frozen=True)
class TransformSpec:
    name: str
    # How the argument is written: None (bare name), "str", "int", "number", "literal", "pair", "decimal", "list"
    arg: Optional[str]
    # The logical type produced; "same" keeps the input type, "numeric" keeps a numeric type.
    produces: str
    # A cast that yields NULL on a value it cannot convert (counts for `coercible`).
    casts: bool = False
    doc: str = ""


def _decimal_type(arg: Any) -> str:
    return f"decimal({arg[0]},{arg[1]})"


TRANSFORMS: dict[str, TransformSpec] = {
    t.name: t
    for t in (
        TransformSpec("trim", None, "string", doc="remove leading and trailing white space (Unicode White_Space)"),
        TransformSpec("upper", None, "string", doc="upper-case"),
        TransformSpec("lower", None, "string", doc="lower-case"),
        TransformSpec("to_string", None, "string", doc="the value as text"),
        TransformSpec("to_int", None, "int", casts=True, doc="64-bit integer; only integer text converts"),
        TransformSpec("to_bool", None, "bool", casts=True, doc="boolean: true/t/yes/y/on/1 or false/f/no/n/off/0, any case"),
        TransformSpec("to_decimal", "decimal", "decimal", casts=True, doc="[precision, scale]; rounds to the scale"),
        TransformSpec("parse_date", "str", "date", casts=True, doc="ISO8601 or a strftime format"),
        TransformSpec("parse_ts", "str", "timestamp", casts=True, doc="ISO8601, ISO8601_INSTANT or a strftime format; UTC"),
        TransformSpec("to_utc", "str", "timestamp", casts=True, doc="a local timestamp in the named zone, to UTC"),
        TransformSpec("enum_map", "pairs", "string", doc="[raw, mapped, ...]; unmapped values pass through"),
        TransformSpec("split_part", "pair", "string", doc="[delimiter, 1-based index]"),
        TransformSpec("regex_extract", "pair", "string", doc="[pattern, group]; NULL when no match"),
        TransformSpec("strip_prefix", "str", "string", doc="remove a leading text"),
        TransformSpec("strip_suffix", "str", "string", doc="remove a trailing text"),
        TransformSpec("concat", "str", "string", doc="append a text"),
        TransformSpec("coalesce", "literal", "same", doc="replace NULL by a literal"),
        TransformSpec("nullif", "literal", "same", doc="a sentinel value becomes NULL"),
        TransformSpec("multiply", "number", "numeric", doc="multiply by a number"),
        TransformSpec("divide", "number", "numeric", casts=True,
                      doc="divide by a non-zero number; the quotient to 9 decimal places"),
        TransformSpec("round", "int", "numeric", doc="round to a number of digits"),
        TransformSpec("abs", None, "numeric", doc="absolute value"),
    )
}


@dataclass(frozen=True)
class Step:
    """One resolved transform in a chain."""

    name: str
    args: tuple = ()

    @property
    def spec(self) -> TransformSpec:
        return TRANSFORMS[self.name]


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, (int, float)):
        return True
    if isinstance(v, str):
        try:
            float(v)
            return True
        except ValueError:
            return False
    return False


def _in_decimal_range(v: Any) -> bool:
    """A number an engine's decimal literal holds exactly: finite, under 10^29, at most 18
    fraction digits (`multiply: 1e999999` would reach the warehouse as `Infinity`)."""
    from decimal import Decimal, InvalidOperation

    try:
        d = Decimal(str(v))
    except (InvalidOperation, ValueError):
        return False
    return d.is_finite() and (d == 0 or (d.adjusted() < 29 and d.as_tuple().exponent >= -18))


def parse_step(raw: Any) -> tuple[Optional[Step], Optional[str]]:
    """Read one chain item: a bare name or a one-key map. Returns (step, problem sentence)."""
    names = ", ".join(f"`{n}`" for n in sorted(TRANSFORMS))
    if isinstance(raw, str):
        name, arg, bare = raw, None, True
    elif isinstance(raw, dict) and len(raw) == 1:
        name, arg = next(iter(raw.items()))
        bare = False
    else:
        return None, f"a transform is a bare name or a one-key map such as `{{to_decimal: [12, 2]}}`; transforms are {names}."
    spec = TRANSFORMS.get(name)
    if spec is None:
        import difflib

        guess = difflib.get_close_matches(str(name), list(TRANSFORMS), n=1)
        hint = f" Did you mean `{guess[0]}`?" if guess else ""
        return None, f"`{name}` is not a transform.{hint} Transforms are {names}."
    if spec.arg is None:
        if not bare:
            return None, f"`{name}` takes no argument; write it as a bare name: `- {name}`."
        return Step(name), None
    if bare:
        return None, f"`{name}` needs an argument, {_arg_example(spec)}; write it as a one-key map such as `{{{name}: {_EXAMPLES[name]}}}`."
    check: Callable[[Any], bool] = _ARG_CHECKS[spec.arg]
    if not check(arg):
        return None, f"`{name}` takes {_arg_example(spec)} as its argument, not {arg!r}; write e.g. `{{{name}: {_EXAMPLES[name]}}}`."
    if name == "regex_extract":
        problem = _extract_problem(str(arg[0]), int(arg[1]))
        if problem:
            return None, problem
    if name == "split_part" and int(arg[1]) == 0:
        # PostgreSQL stops the build on it ("field position must not be zero"), DuckDB and Spark
        # read it as an empty text: refused here, with the spec (an outside tester, session 37)
        return None, (f"`split_part` counts its parts from 1 (or from -1 at the end), and 0 names none; write e.g. "
                      f"`{{split_part: [{json.dumps(arg[0])}, 1]}}` for the first part or `[{json.dumps(arg[0])}, -1]` for the last.")
    if spec.arg in ("decimal", "pair", "pairs"):
        return Step(name, tuple(arg)), None
    if name == "to_utc" and not _known_zone(str(arg)):
        # the engine would refuse it at build time, on the first row: refused here, with the spec
        return None, (f"`to_utc` takes an IANA time zone name, and `{arg}` is none; write e.g. "
                      f"`{{to_utc: {_EXAMPLES[name]}}}` (the names are those of the tz database).")
    if name in ("parse_ts", "parse_date"):
        unknown = unknown_directives(str(arg))
        if unknown:
            # DuckDB's strptime fails the build on it, every other engine at compile time: refused
            # here, with the spec (decision 1126)
            codes = ", ".join(f"`{d}`" for d in unknown)
            example = "%Y-%m-%d" if name == "parse_date" else "%Y-%m-%d %H:%M:%S"
            return None, (f"`{name}: '{arg}'` holds {codes}, which no engine's strptime reads (DuckDB's stops the "
                          f"build: `Failed to parse format specifier`); write the format with the directives every "
                          f"engine reads, %Y %y %m %b %B %d %H %M %S %f and %% for a literal `%`, e.g. "
                          f"`{{{name}: '{example}'}}`, or `{{{name}: ISO8601}}`.")
    return Step(name, (arg,)), None


def _extract_problem(pattern: str, group: int) -> Optional[str]:
    """Why `regex_extract: [pattern, group]` cannot run, or None. A pattern no regular-expression
    engine compiles stopped the build at its first row (an outside tester, session 36: DuckDB's
    `missing )`); a group the pattern does not have extracts nothing on any row."""
    import re

    try:
        groups = re.compile(pattern).groups
    except re.error as exc:
        return (f"`regex_extract: ['{pattern}', {group}]`: the pattern does not compile ({exc}); every engine stops the "
                f"build on it; write a regular expression whose parentheses and brackets close, e.g. "
                f"`{{regex_extract: {_EXAMPLES['regex_extract']}}}`.")
    if not 0 <= group <= groups:
        return (f"`regex_extract: ['{pattern}', {group}]`: the pattern has {groups} capturing "
                f"group{'' if groups == 1 else 's'}, so group {group} is never there; write a group from 0 (the whole "
                f"match) to {groups}.")
    return None


def _known_zone(name: str) -> bool:
    """An IANA time zone name, as the tz database this machine carries lists them (every name is
    accepted where it carries none, rather than refusing them all)."""
    import zoneinfo

    zones = zoneinfo.available_timezones()
    return not zones or name in zones


# The strftime directives `parse_ts`/`parse_date` understand on every engine: off DuckDB (whose own
# strptime knows many more) both packages parse a format with a regex built from these alone (the
# dbt package's `_strftime_directives`, the SQLMesh macros' `DIRECTIVES`; tests hold them equal).
PORTABLE_STRFTIME = "YymbBdHMSf"
ISO_FORMATS = ("ISO8601", "ISO8601_INSTANT")


# The directives DuckDB's strptime reads (read from DuckDB 1.5: every `%X` and `%-X` it does not
# refuse with "Failed to parse format specifier"; tests/spec/test_target_refusals.py holds this set
# to the installed DuckDB). A directive outside it is read by no engine assay runs on (decision 1126).
DUCKDB_STRFTIME = frozenset(
    [f"%{c}" for c in "abcdfghjmnpuwxyzABGHIMSTUVWXYZ%"] + [f"%-{c}" for c in "djmyHIMS"])


def strftime_directives(fmt: str) -> list[str]:
    """The directives of a strftime format, in order, each once: `%Y`, `%-d` (DuckDB's unpadded
    form), `%%`; a `%` that ends the format is the directive `%`."""
    if fmt in ISO_FORMATS:
        return []
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] != "%":
            i += 1
            continue
        code = fmt[i:i + 3] if fmt[i + 1:i + 2] == "-" and i + 2 < len(fmt) else fmt[i:i + 2]
        if code not in out:
            out.append(code)
        i += len(code)
    return out


def unportable_directives(fmt: str) -> list[str]:
    """The directives of a strftime format outside `PORTABLE_STRFTIME` and `%%`, in order."""
    return [d for d in strftime_directives(fmt) if d != "%%" and d[1:] not in tuple(PORTABLE_STRFTIME)]


def unknown_directives(fmt: str) -> list[str]:
    """The directives of a strftime format that no engine reads: outside DuckDB's strptime's, which
    holds every portable one."""
    return [d for d in strftime_directives(fmt) if d not in DUCKDB_STRFTIME]


# One argument per transform that takes one, as a user would write it in YAML.
_EXAMPLES = {
    "to_decimal": "[12, 2]",
    "parse_date": "ISO8601",
    "parse_ts": "ISO8601",
    "to_utc": "Europe/Berlin",
    "enum_map": "[A, active, I, inactive]",
    "split_part": '["-", 2]',
    "regex_extract": '["^([0-9]+)", 1]',
    "strip_prefix": "ID-",
    "strip_suffix": " EUR",
    "concat": "-x",
    "coalesce": "unknown",
    "nullif": "N/A",
    "multiply": "100",
    "divide": "100",
    "round": "2",
}


def _arg_example(spec: TransformSpec) -> str:
    return {
        "decimal": "[precision, scale] with 1 <= precision <= 38 and 0 <= scale <= precision",
        "str": "a text",
        "int": "a whole number from -38 to 38",
        "number": "a non-zero number of at most 29 integer and 18 fraction digits",
        "literal": "a literal value",
        "pair": '[text, whole number], e.g. ["-", 2]',
        "pairs": "[raw, mapped, raw, mapped, ...] (an even-length list of texts)",
    }[spec.arg]


_ARG_CHECKS: dict[str, Callable[[Any], bool]] = {
    "decimal": lambda a: isinstance(a, list)
    and len(a) == 2
    and all(isinstance(x, int) and not isinstance(x, bool) for x in a)
    and 1 <= a[0] <= 38
    and 0 <= a[1] <= a[0],
    "str": lambda a: isinstance(a, str) and a != "",
    "int": lambda a: isinstance(a, int) and not isinstance(a, bool) and -38 <= a <= 38,
    "number": lambda a: _is_number(a) and _in_decimal_range(a) and float(a) != 0,
    "literal": lambda a: isinstance(a, (str, int, float, bool)),
    "pair": lambda a: isinstance(a, list) and len(a) == 2 and isinstance(a[0], str) and isinstance(a[1], int) and not isinstance(a[1], bool),
    "pairs": lambda a: isinstance(a, list) and len(a) >= 2 and len(a) % 2 == 0 and all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in a),
}


def output_type(steps: tuple[Step, ...], source_type: Optional[str] = None) -> Optional[str]:
    """The logical type a chain produces; None when it only passes the bronze value through."""
    current = source_type
    for step in steps:
        produced = step.spec.produces
        if produced == "same":
            continue
        if produced == "numeric":
            if current is None or not is_numeric(current):
                current = "decimal(38,9)"
            continue
        if produced == "decimal":
            current = _decimal_type(step.args)
            continue
        current = produced
    return current


def is_numeric(assay_type: str) -> bool:
    return assay_type == "int" or assay_type.startswith("decimal")
