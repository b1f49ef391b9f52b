"""Field chains: a mapping field's bronze value, its transforms and final cast, and its coercion marker.

The output type of every step comes from the transform table (spec/transforms.py); this module
decides only the relational expression of each step.
"""

from __future__ import annotations

from decimal import Decimal

from ..ir.model import STEP_COLUMN_PREFIX, FieldSource
from ..spec.transforms import Step, is_numeric
from .instants import text_to_instant
from .spelling import Spelling, Sql

# The type of an arithmetic result, which no field type equals: it forces the final cast
# (arithmetic result types differ by engine; Postgres `round` drops the scale).
NUMERIC = "numeric"


def step_type(step: Step, current: str | None) -> str | None:
    """The logical type one step produces, read from the transform table."""
    produced = step.spec.produces
    if produced == "same":
        return current
    if produced == "decimal":
        return f"decimal({step.args[0]},{step.args[1]})"
    return produced  # "numeric" is NUMERIC: kept apart from every field type on purpose


# The arithmetic transforms, and the number a text operand is read as before them: a read that can
# fail like any cast, so it has a coercion marker of its own.
ARITHMETIC = ("multiply", "divide", "round", "abs")
OPERAND = "decimal(38,9)"


def is_number(current: str | None) -> bool:
    return current is not None and (current == NUMERIC or is_numeric(current))


def whole(sp: Spelling, expr: str) -> str:
    """A number as a whole number, NULL when it has a fraction: `1234.00` reads as the int 1234,
    `12.5` does not read as an int at all (as the text `12.5` does not).

    As a `decimal(19,0)`, whose text is digits only on every engine: DuckDB divides decimals into
    a DOUBLE, whose text `2.0` the int cast refused, so `8` divided by 4 was quarantined there and
    kept as 2 on PostgreSQL (an outside tester, session 37). Beyond 19 digits no int holds it: NULL."""
    return sp.sql("case when {e} = round({e}, 0) and abs({e}) < 9223372036854775808 "
                  "then cast(round({e}, 0) as decimal(19,0)) end", e=expr)


def lower_step(sp: Spelling, expr: str, step: Step, current: str | None, safe: bool) -> tuple[str, str | None]:
    """Apply one transform; return (expression, its logical type)."""
    n, a = step.name, step.args
    out_type = step_type(step, current)
    text = expr if current in (None, "string") else sp.cast(expr, "string", False)
    if n == "trim":  # one set of white space on every engine (decision 0960)
        return sp.call("trim_white_space", Sql(text)), out_type
    if n in ("upper", "lower"):
        return sp.sql(n + "({})", text), out_type
    if n == "to_string":
        return text, out_type
    if n == "to_int" and is_number(current) and current != "int":
        return sp.cast(whole(sp, expr), out_type, safe), out_type
    if n in ("to_int", "to_bool", "to_decimal"):
        return sp.cast(text, out_type, safe), out_type
    if n in ("parse_date", "parse_ts"):
        return sp.call(n, Sql(text), str(a[0])), out_type
    if n == "to_utc" and current in (None, "string"):
        # Text is read as a timestamp first, by the guarded cast (its marker: the transform table's
        # `casts`); text that names its own zone (an offset, `Z`, `UTC`) is that instant, not a wall
        # clock of the zone (decisions 0967, 1149), read as a `timestamp` field reads it.
        local = sp.call("to_utc", Sql(sp.cast(text, "timestamp", safe)), str(a[0]))
        return text_to_instant(sp, text, safe, local), out_type
    if n == "to_utc":
        return sp.call("to_utc", Sql(expr), str(a[0])), out_type
    if n == "enum_map":
        pairs = " ".join(sp.sql("when {} then {}", sp.string(str(r)), sp.string(str(m))) for r, m in zip(a[0::2], a[1::2]))
        return sp.sql("case {t} {p} else {t} end", t=text, p=pairs), out_type
    if n == "split_part":
        return sp.sql("split_part({}, {}, {})", text, sp.string(a[0]), int(a[1])), out_type
    if n == "regex_extract":
        return sp.call("regex_extract", Sql(text), a[0], int(a[1])), out_type
    if n == "strip_prefix":
        t = str(a[0])
        return sp.sql("case when substr({x}, 1, {n}) = {s} then substr({x}, {m}) else {x} end", x=text, n=len(t), s=sp.string(t), m=len(t) + 1), out_type
    if n == "strip_suffix":
        t = str(a[0])
        return sp.sql("case when right({x}, {n}) = {s} then left({x}, length({x}) - {n}) else {x} end", x=text, n=len(t), s=sp.string(t)), out_type
    if n == "concat":
        return f"({text} || {sp.string(str(a[0]))})", out_type
    if n in ("coalesce", "nullif"):
        return sp.sql(n + "({}, {})", expr, sp.literal(a[0])), out_type
    # arithmetic: `lower_field` has read a text operand as a number already (with its marker)
    if n == "multiply":
        return f"({expr} * {format(Decimal(str(a[0])), 'f')})", out_type
    if n == "divide":
        # The quotient to 9 places on every engine: DuckDB divides decimals into a DOUBLE, PostgreSQL
        # into a numeric of about 20 places, Spark into a decimal of its own scale, so `1 / 3` into
        # a decimal(38,20) field was three values, and a range bound between them routed the row
        # differently (an outside tester, session 43). A quotient past 29 digits is a coercion failure
        # (NULL, its marker TRUE). Not the guarded cast: a decimal's guarded cast repeats its operand
        # many times over, and the field's own guarded cast around it did again (3.5 MB of SQL).
        quotient = f"({expr} / {format(Decimal(str(a[0])), 'f')})"
        return sp.sql("case when abs({q}) < 1e29 then {c} end", q=quotient, c=sp.cast(quotient, OPERAND, False)), out_type
    if n == "round":
        return sp.sql("round({}, {})", expr, int(a[0])), out_type
    if n == "abs":
        return sp.sql("abs({})", expr), out_type
    raise ValueError(f"unknown transform {n}")  # pragma: no cover - validation refuses it


def json_path_read(sp: Spelling, doc: str, keys, safe: bool) -> tuple[str, str | None]:
    """A key path read inside a JSON column, and its coercion marker (decisions 1123, 1130).

    On an opted-in entity (`safe`) a value that is not JSON is a coercion failure of every field
    read from it: the read yields NULL and the marker is TRUE, so the implicit `<col>_coercible`
    rule (or the field's own `coercible`) disposes of the row, never an engine error. So is a
    readable document whose shape stops the path (`json_path_blocked`): the document itself, or a
    value on the way to the last key, is a string, number, boolean or array where a key is read;
    the data is not the shape the spec reads, as text that is not JSON is not. A JSON `null` on
    the way, a missing key and an SQL NULL column read NULL without a marker: the document holds
    no value there, which `not_null` judges. The value at the last key is the field's cast's to
    judge. Each engine spells both tests with its own JSON reader. Elsewhere the read stays
    produce-or-raise.
    """
    read = sp.json_extract_text(doc, keys)
    if not safe:
        return read, None
    readable = sp.json_valid(doc)
    # the shape is asked only of a readable document (an engine's reader may raise on the others)
    marker = sp.sql("(case when {} then {} else {} is not null end)", readable, sp.json_path_blocked(doc, keys), doc)
    return sp.sql("case when {} then {} end", readable, read), marker


def text_to_timestamp(sp: Spelling, text: str, safe: bool) -> str:
    """Text to a `timestamp` field's value: the instant its zone names, or its wall clock when it
    names none (lower/instants.py)."""
    return text_to_instant(sp, text, safe)


class Steps:
    """Values a field chain reads more than once, each computed once in a derived table beneath the
    mapping's select rather than spelled again at every reference.

    A guarded cast reads its operand up to seven times (its guard, then the cast; a decimal's on
    DuckDB some thirty), and the coercion marker reads the cast again: spelled inline, a chain of
    two casts (`to_decimal`, `round`, the field's final cast) repeated the first cast's SQL hundreds
    of times, 115 KB for one column of the kitchen-sink spec, which SQLMesh and sqlglot parse on
    every load and render. Bound are a cast's derived operand and a casting step's result that a
    later step reads (its marker reads it too); each is one column of the level below
    (`b.<name>`), and the engines compute the same values (every step is deterministic)."""

    def __init__(self, sp: Spelling) -> None:
        self.sp = sp
        self.levels: list[list[str]] = []  # level k's `expr as name` items; level k reads k - 1

    def binder(self, column: int):
        """The bind function of one field (the entity's column `column`): `bind(expr, depth)` puts
        `expr` (reading bindings of depths below `depth` only) in level `depth` and returns the
        column that reads it."""
        def bind(expr: str, depth: int) -> str:
            while len(self.levels) <= depth:
                self.levels.append([])
            name = f"{STEP_COLUMN_PREFIX}{column}_{depth}"
            self.levels[depth].append(self.sp.sql("{} as {}", expr, name))
            return f"b.{name}"
        return bind

    def source(self, inner: str) -> str:
        """The from-item that holds every level over `inner` (a query of bronze's columns as `b`)."""
        i = self.sp.indent
        item = inner
        for level in self.levels:
            cols = (",\n" + i * 3).join(["b.*"] + level)
            nested = item.replace("\n", "\n" + i)
            item = self.sp.sql("(\n{i}{i}select\n{i}{i}{i}{cols}\n{i}{i}from {item} as b\n{i})", i=i, cols=cols, item=nested)
        return item


def lower_field(sp: Spelling, src: FieldSource, alias: str, safe: bool, bind=None) -> tuple[str, str | None]:
    """The column's value expression and its coercion marker (None when nothing can fail).

    `bind` (`Steps.binder`) takes a derived value that is read more than once and returns the
    column it is computed in; without it every value is spelled inline."""
    head = f"{alias}.{sp.ident(src.path[0])}"
    raw_text = sp.cast(head, "string", False)
    markers = []
    if len(src.path) > 1:
        expr, marker = json_path_read(sp, head, src.path[1:], safe)
        markers += [marker] if marker else []
    else:
        expr = raw_text
    current = "string"
    bound: list[str] = []

    def once(value: str) -> str:
        # a value read more than once: bound when it is derived (a bronze column's own text is
        # short; repeating it costs nothing) and not bound already
        if bind is None or value == raw_text or value in bound:
            return value
        bound.append(bind(value, len(bound)))
        return bound[-1]

    for index, step in enumerate(src.steps):
        if step.name in ARITHMETIC and not is_number(current):
            # a text operand is read as a number first; a value that is none is a coercion failure
            before = expr = once(expr)
            expr, current = once(sp.cast(expr, OPERAND, safe)), OPERAND  # read by its marker and the step
            markers.append(sp.coercion_failed(before, expr))
        if step.spec.casts:
            expr = once(expr)
        before = expr
        expr, current = lower_step(sp, expr, step, current, safe)
        if step.spec.casts:
            if index < len(src.steps) - 1 or current != src.target_type:
                expr = once(expr)  # its marker reads it, and so does the step after it
            markers.append(sp.coercion_failed(before, expr))
    if current != src.target_type:
        before = expr = once(expr)
        if src.target_type == "timestamp" and current == "string":
            expr = text_to_timestamp(sp, expr, safe)
        else:
            operand = whole(sp, expr) if src.target_type == "int" and is_number(current) else expr
            expr = sp.cast(operand, src.target_type, safe)
        markers.append(sp.coercion_failed(before, expr))
    return expr, (sp.join("or", markers) if markers else None)
