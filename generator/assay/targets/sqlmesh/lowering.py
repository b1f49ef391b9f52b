"""Lowering for SQLMesh: IR transforms and rules into SQLMesh SQL that calls the assay macros.

Everything that differs between engines is a call to an `assay_sqlmesh` macro
(`@assay_try_cast`, `@assay_regex_matches`, ...), which renders for the engine at run time.
This module spells only SQL every engine reads alike, and spells identifiers and literals
through sqlglot in the project's model dialect so that they parse back exactly.
The semantics are the dbt target's (docs/internals/pipeline.md), rule for rule.
"""

from __future__ import annotations

import re
from decimal import Decimal

import sqlglot
from sqlglot import exp

from ...ir.model import Entity, FieldSource, Rule
from ...spec.transforms import Step
from ..dbt.lowering import RESERVED

SIMPLE_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
# The type of an arithmetic result, which no field type equals: it forces the final cast
# (arithmetic result types differ by engine; Postgres `round` drops the scale).
NUMERIC = "numeric"


class Lowering:
    """Spelling helpers bound to one model dialect."""

    def __init__(self, dialect: str = "duckdb") -> None:
        self.dialect = dialect

    # -- names and literals -------------------------------------------------------------
    def qi(self, name: str) -> str:
        """A column identifier: bare when every engine reads it as written, else quoted."""
        quoted = not SIMPLE_IDENT.match(name) or name in RESERVED
        return exp.to_identifier(name, quoted=quoted).sql(dialect=self.dialect)

    def lit(self, value) -> str:
        """A SQL literal: booleans and numbers bare, anything else a string escaped for the dialect."""
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        if isinstance(value, (int, float)):
            return str(value)
        return exp.Literal.string(str(value)).sql(dialect=self.dialect)

    def table(self, schema: str, name: str) -> str:
        return exp.table_(name, db=schema).sql(dialect=self.dialect)

    # -- casts ----------------------------------------------------------------------------
    def cast(self, expr: str, assay_type: str, safe: bool) -> str:
        """A cast that yields NULL on failure (`safe`), or the engine's own raising cast."""
        macro = "assay_try_cast" if safe else "assay_cast"
        return f"@{macro}({expr}, {self.lit(assay_type)})"

    def _step(self, expr: str, step: Step, current: str | None, safe: bool) -> tuple[str, str | None]:
        """Apply one transform; return (expression, its logical type)."""
        n, a = step.name, step.args
        txt = expr if current in (None, "string") else self.cast(expr, "string", False)
        if n == "trim":
            return f"TRIM({txt})", "string"
        if n in ("upper", "lower"):
            return f"{n.upper()}({txt})", "string"
        if n == "to_string":
            return txt, "string"
        if n == "to_int":
            return self.cast(txt, "int", safe), "int"
        if n == "to_bool":
            return self.cast(txt, "bool", safe), "bool"
        if n == "to_decimal":
            t = f"decimal({a[0]},{a[1]})"
            return self.cast(txt, t, safe), t
        if n == "parse_date":
            return f"@assay_parse_date({txt}, {self.lit(str(a[0]))})", "date"
        if n == "parse_ts":
            return f"@assay_parse_ts({txt}, {self.lit(str(a[0]))})", "timestamp"
        if n == "to_utc":
            return f"@assay_to_utc({expr}, {self.lit(str(a[0]))})", "timestamp"
        if n == "enum_map":
            pairs = " ".join(f"WHEN {self.lit(str(r))} THEN {self.lit(str(m))}" for r, m in zip(a[0::2], a[1::2]))
            return f"CASE {txt} {pairs} ELSE {txt} END", "string"
        if n == "split_part":
            return f"SPLIT_PART({txt}, {self.lit(a[0])}, {int(a[1])})", "string"
        if n == "regex_extract":
            return f"@assay_regex_extract({txt}, {self.lit(a[0])}, {int(a[1])})", "string"
        if n == "strip_prefix":
            t = str(a[0])
            return f"CASE WHEN SUBSTR({txt}, 1, {len(t)}) = {self.lit(t)} THEN SUBSTR({txt}, {len(t) + 1}) ELSE {txt} END", "string"
        if n == "strip_suffix":
            t = str(a[0])
            return f"CASE WHEN RIGHT({txt}, {len(t)}) = {self.lit(t)} THEN LEFT({txt}, LENGTH({txt}) - {len(t)}) ELSE {txt} END", "string"
        if n == "concat":
            return f"({txt} || {self.lit(str(a[0]))})", "string"
        if n == "coalesce":
            return f"COALESCE({expr}, {self.lit(a[0])})", current
        if n == "nullif":
            return f"NULLIF({expr}, {self.lit(a[0])})", current
        is_number = current is not None and (current in ("int", NUMERIC) or current.startswith("decimal"))
        num = expr if is_number else self.cast(expr, "decimal(38,9)", safe)
        if n == "multiply":
            return f"({num} * {Decimal(str(a[0]))})", NUMERIC
        if n == "divide":
            return f"({num} / {Decimal(str(a[0]))})", NUMERIC
        if n == "round":
            return f"ROUND({num}, {int(a[0])})", NUMERIC
        if n == "abs":
            return f"ABS({num})", NUMERIC
        raise ValueError(f"unknown transform {n}")  # pragma: no cover - validation refuses it

    def field(self, src: FieldSource, alias: str, safe: bool) -> tuple[str, str | None]:
        """The column's value expression and its coercion marker (None when nothing can fail)."""
        head = f"{alias}.{self.qi(src.path[0])}"
        if len(src.path) > 1:
            keys = ", ".join(self.lit(str(k)) for k in src.path[1:])
            expr = f"@assay_json_extract_text({head}, {keys})"
        else:
            expr = self.cast(head, "string", False)
        current = "string"
        markers = []
        for step in src.steps:
            before = expr
            expr, current = self._step(expr, step, current, safe)
            if step.spec.casts:
                markers.append(f"@assay_coercion_failed({before}, {expr})")
        if current != src.target_type:
            before = expr
            expr = self.cast(expr, src.target_type, safe)
            markers.append(f"@assay_coercion_failed({before}, {expr})")
        return expr, (" OR ".join(markers) if markers else None)

    # -- rules ----------------------------------------------------------------------------
    def _typed_literal(self, value: str, column_type: str) -> str:
        if column_type == "int" or column_type.startswith("decimal"):
            return str(Decimal(value))
        return f"@assay_cast({self.lit(value)}, {self.lit(column_type)})"

    def expression(self, expr_text: str) -> str:
        """An authored expression, parsed by sqlglot and re-spelled in the model dialect."""
        tree = sqlglot.parse_one(expr_text, read="duckdb")
        for col in tree.find_all(exp.Column):
            if not SIMPLE_IDENT.match(col.name) or col.name in RESERVED:
                col.set("this", exp.to_identifier(col.name, quoted=True))
        return tree.sql(dialect=self.dialect)

    def violation(self, rule: Rule, entity: Entity, column_type: str | None) -> str:
        """The violation predicate of a rule over the judged row; fires only when SQL TRUE."""
        v = self.qi(rule.column) if rule.column else ""
        k = rule.kind
        if k == "coercible":
            return f"_c__{rule.column}"
        if k == "not_null":
            # A NULL that a failed cast produced belongs to `coercible`; not_null judges absent values.
            return f"({v} IS NULL AND NOT _c__{rule.column})"
        if k in ("range", "length"):
            lo, hi = rule.param("min"), rule.param("max")
            if k == "range":
                subject = v
                bound = lambda b: self._typed_literal(str(b), column_type)  # noqa: E731
            else:
                subject = f"@assay_char_length({v})"
                bound = lambda b: str(int(b))  # noqa: E731
            lo_s = None if lo is None else bound(lo)
            hi_s = None if hi is None else bound(hi)
            parts = []
            if lo is not None:
                parts.append(f"{subject} < {lo_s}")
            if hi is not None:
                parts.append(f"{subject} > {hi_s}")
            return "(" + " OR ".join(parts) + ")"
        if k == "pattern":
            return f"NOT (@assay_regex_matches({v}, {self.lit(rule.param('regex'))}))"
        if k in ("in_set", "in_enum"):
            values = rule.param("values") or ()
            if not values:
                return f"({v} IS NOT NULL)"
            if column_type in (None, "string", "variant"):
                target = v if column_type == "string" else self.cast(v, "string", False)
                return f"{target} NOT IN (" + ", ".join(self.lit(x) for x in values) + ")"
            # Typed columns compare typed values: the text of 1.50 is not the text of 1.5.
            if column_type == "bool":
                return f"{v} NOT IN (" + ", ".join(x.upper() for x in values) + ")"
            return f"{v} NOT IN (" + ", ".join(self._typed_literal(x, column_type) for x in values) + ")"
        if k == "unique":
            # Rules run after dedupe: only winners count towards a repeat.
            return f"({v} IS NOT NULL AND SUM(CASE WHEN _dedupe_rank = 1 THEN 1 ELSE 0 END) OVER (PARTITION BY {v}) > 1)"
        if k == "normalize":
            return f"NOT (@assay_is_nfc({v}))"
        if k == "charset":
            spec = ",".join(f"U+{lo:04X}" if lo == hi else f"U+{lo:04X}-U+{hi:04X}" for lo, hi in rule.param("ranges"))
            return f"@assay_charset_violates({v}, {self.lit(spec)}, {self.lit(rule.param('mode'))})"
        if k == "expression":
            return f"NOT ({self.expression(rule.param('expr'))})"
        if k == "referential":
            present = " AND ".join(f"{self.qi(c)} IS NOT NULL" for c, _p in rule.param("columns"))
            return f"({present} AND _probe__{rule.param('relationship')} IS NULL)"
        raise ValueError(f"unknown rule kind {k}")  # pragma: no cover
