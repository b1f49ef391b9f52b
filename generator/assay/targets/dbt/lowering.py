"""Lowering for dbt: IR transforms and rules into adapter-neutral Jinja SQL.

Everything that differs between engines is a call into the `assay` dbt
package (`assay.try_cast`, `assay.regex_matches`, ...), so one generated
project runs on every adapter the package dispatches to. This module only
spells SQL that every engine reads alike.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal

import sqlglot
from sqlglot import exp

from ...ir.model import Entity, FieldSource, Rule
from ...spec.transforms import Step
from ...lower.reserved_words import RESERVED_WORDS

# The type of an arithmetic result, which no field type equals: it forces the final cast.
NUMERIC = "numeric"
SIMPLE_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
RESERVED = RESERVED_WORDS


def qi(name: str) -> str:
    """A column identifier: bare when every engine reads it as is, else quoted by the adapter."""
    if SIMPLE_IDENT.match(name) and name not in RESERVED:
        return name
    return "{{ adapter.quote(" + jstr(name) + ") }}"


def qi_jinja(name: str) -> str:
    """The same identifier as a Jinja expression, for use inside `{% ... %}` code."""
    if SIMPLE_IDENT.match(name) and name not in RESERVED:
        return jstr(name)
    return "adapter.quote(" + jstr(name) + ")"


def jstr(value: str) -> str:
    """A Jinja string literal (JSON escaping is valid Jinja)."""
    return json.dumps(value, ensure_ascii=False)


def sql_str(value: str) -> str:
    """A SQL string literal. Backslashes go through the package, which knows each engine's escaping."""
    if "\\" in value:
        return "{{ assay.string_literal(" + jstr(value) + ") }}"
    return "'" + value.replace("'", "''") + "'"


def call(macro: str, *args: str) -> str:
    """`{{ assay.<macro>(arg, ...) }}` where args are already Jinja expressions."""
    return "{{ assay." + macro + "(" + ", ".join(args) + ") }}"


def jexpr(sql: str) -> str:
    """A SQL fragment passed to a macro as a Jinja string; nested `{{ }}` become concatenations."""
    parts = re.split(r"(\{\{.*?\}\})", sql)
    out = []
    for p in parts:
        if not p:
            continue
        if p.startswith("{{") and p.endswith("}}"):
            out.append("(" + p[2:-2].strip() + ")")
        else:
            out.append(jstr(p))
    return " ~ ".join(out) if out else '""'


def sql_type(assay_type: str) -> str:
    return call("sql_type", jstr(assay_type))


def cast(expr: str, assay_type: str, safe: bool) -> str:
    """A cast that yields NULL on failure (`safe`), or the engine's own raising cast."""
    if safe:
        return call("try_cast", jexpr(expr), jstr(assay_type))
    return f"cast({expr} as {sql_type(assay_type)})"


def literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return sql_str(str(value))


def _step(expr: str, step: Step, current_type: str | None, safe: bool) -> tuple[str, str | None]:
    """Apply one transform; return (expression, its logical type)."""
    n, a = step.name, step.args
    text = expr if current_type in (None, "string") else cast(expr, "string", False)
    if n == "trim":
        return f"trim({text})", "string"
    if n in ("upper", "lower"):
        return f"{n}({text})", "string"
    if n == "to_string":
        return text, "string"
    if n == "to_int":
        return cast(text, "int", safe), "int"
    if n == "to_bool":
        return cast(text, "bool", safe), "bool"
    if n == "to_decimal":
        t = f"decimal({a[0]},{a[1]})"
        return cast(text, t, safe), t
    if n == "parse_date":
        return call("parse_date", jexpr(text), jstr(str(a[0]))), "date"
    if n == "parse_ts":
        return call("parse_ts", jexpr(text), jstr(str(a[0]))), "timestamp"
    if n == "to_utc":
        return call("to_utc", jexpr(expr), jstr(str(a[0]))), "timestamp"
    if n == "enum_map":
        pairs = " ".join(f"when {sql_str(str(r))} then {sql_str(str(m))}" for r, m in zip(a[0::2], a[1::2]))
        return f"case {text} {pairs} else {text} end", "string"
    if n == "split_part":
        return f"split_part({text}, {sql_str(a[0])}, {int(a[1])})", "string"
    if n == "regex_extract":
        return call("regex_extract", jexpr(text), jstr(a[0]), str(int(a[1]))), "string"
    if n == "strip_prefix":
        t = str(a[0])
        return f"case when substr({text}, 1, {len(t)}) = {sql_str(t)} then substr({text}, {len(t) + 1}) else {text} end", "string"
    if n == "strip_suffix":
        t = str(a[0])
        return (
            f"case when right({text}, {len(t)}) = {sql_str(t)} then left({text}, length({text}) - {len(t)}) else {text} end",
            "string",
        )
    if n == "concat":
        return f"({text} || {sql_str(str(a[0]))})", "string"
    if n == "coalesce":
        return f"coalesce({expr}, {literal(a[0])})", current_type
    if n == "nullif":
        return f"nullif({expr}, {literal(a[0])})", current_type
    is_number = current_type is not None and (current_type in ("int", NUMERIC) or current_type.startswith("decimal"))
    num = expr if is_number else cast(expr, "decimal(38,9)", safe)
    # Arithmetic result types differ by engine (Postgres `round` drops the scale), so the
    # chain's result is always cast to the field's type at the end.
    if n == "multiply":
        return f"({num} * {Decimal(str(a[0]))})", NUMERIC
    if n == "divide":
        return f"({num} / {Decimal(str(a[0]))})", NUMERIC
    if n == "round":
        return f"round({num}, {int(a[0])})", NUMERIC
    if n == "abs":
        return f"abs({num})", NUMERIC
    raise ValueError(f"unknown transform {n}")  # pragma: no cover - validation refuses it


def lower_field(src: FieldSource, bronze_alias: str, safe: bool) -> tuple[str, str | None]:
    """The column's value expression and its coercion marker (None when nothing can fail)."""
    head = f"{bronze_alias}.{qi(src.path[0])}"
    if len(src.path) > 1:
        head = call("json_extract_text", jexpr(head), jstr_list(src.path[1:]))
        expr, current = head, "string"
    else:
        expr, current = cast(head, "string", False), "string"
    markers = []
    for step in src.steps:
        before = expr
        expr, current = _step(expr, step, current, safe)
        if step.spec.casts:
            markers.append(f"({before} is not null and {expr} is null)")
    if current != src.target_type:
        before = expr
        expr = cast(expr, src.target_type, safe)
        markers.append(f"({before} is not null and {expr} is null)")
    marker = " or ".join(markers) if markers else None
    return expr, marker


def jstr_list(items) -> str:
    return "[" + ", ".join(jstr(str(i)) for i in items) + "]"


def _typed_literal(value: str, column_type: str) -> str:
    if column_type == "int" or column_type.startswith("decimal"):
        return str(Decimal(value))
    return f"cast({sql_str(value)} as {sql_type(column_type)})"


def expression_sql(expr_text: str) -> str:
    """An authored expression, parsed by sqlglot and re-spelled in portable SQL."""
    tree = sqlglot.parse_one(expr_text, read="duckdb")
    for col in tree.find_all(exp.Column):
        if not SIMPLE_IDENT.match(col.name) or col.name in RESERVED:
            col.set("this", exp.to_identifier(col.name, quoted=True))
    return tree.sql(dialect="postgres")


def violation(rule: Rule, entity: Entity, column_type: str | None) -> str:
    """The violation predicate of a rule over the judged row; fires only when SQL TRUE."""
    v = qi(rule.column) if rule.column else ""
    k = rule.kind
    if k == "coercible":
        return f"_c__{rule.column}"
    if k == "not_null":
        # A NULL that a failed cast produced belongs to `coercible`; not_null judges absent values.
        return f"({v} is null and not _c__{rule.column})"
    if k == "range":
        lo, hi = rule.param("min"), rule.param("max")
        parts = []
        if lo is not None:
            parts.append(f"{v} < {_typed_literal(lo, column_type)}")
        if hi is not None:
            parts.append(f"{v} > {_typed_literal(hi, column_type)}")
        return "(" + " or ".join(parts) + ")"
    if k == "length":
        n = call("char_length", jexpr(v))
        parts = []
        if rule.param("min") is not None:
            parts.append(f"{n} < {int(rule.param('min'))}")
        if rule.param("max") is not None:
            parts.append(f"{n} > {int(rule.param('max'))}")
        return "(" + " or ".join(parts) + ")"
    if k == "pattern":
        return "not (" + call("regex_matches", jexpr(v), jstr(rule.param("regex"))) + ")"
    if k in ("in_set", "in_enum"):
        values = rule.param("values") or ()
        if not values:
            return f"({v} is not null)"
        if column_type in (None, "string", "variant"):
            target = v if column_type == "string" else cast(v, "string", False)
            return f"{target} not in (" + ", ".join(sql_str(x) for x in values) + ")"
        # Typed columns compare typed values: the text of 1.50 is not the text of 1.5.
        if column_type == "bool":
            return f"{v} not in (" + ", ".join(x for x in values) + ")"
        return f"{v} not in (" + ", ".join(_typed_literal(x, column_type) for x in values) + ")"
    if k == "unique":
        # Rules run after dedupe: only winners count towards a repeat.
        return f"({v} is not null and sum(case when _dedupe_rank = 1 then 1 else 0 end) over (partition by {v}) > 1)"
    if k == "normalize":
        return "not (" + call("is_nfc", jexpr(v)) + ")"
    if k == "charset":
        ranges = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in rule.param("ranges")) + "]"
        return call("charset_violates", jexpr(v), ranges, jstr(rule.param("mode")))
    if k == "expression":
        return f"not ({expression_sql(rule.param('expr'))})"
    if k == "referential":
        cols = rule.param("columns")
        fk_present = " and ".join(f"{qi(c)} is not null" for c, _p in cols)
        return f"({fk_present} and _probe__{rule.param('relationship')} is null)"
    raise ValueError(f"unknown rule kind {k}")  # pragma: no cover
