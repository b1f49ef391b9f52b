"""Rule predicates: the violation of each rule kind over the judged row, and its scoping."""

from __future__ import annotations

from decimal import Decimal

from ..ir.model import LINEAGE_TYPES, Entity, Rule
from ..privacy import pii_columns
from .authored import authored
from .spelling import Raw, Spelling, Sql


def typed_literal(sp: Spelling, value: str, column_type: str) -> str:
    """A bound or set member compared as the column's type, not as text."""
    if column_type == "int" or column_type.startswith("decimal"):
        number = Decimal(value)
        if not number.is_finite():  # `Infinity`/`NaN` would be a bare word; the loader refuses them (decision 1153)
            raise ValueError(f"no SQL literal for the non-finite number {value!r}")
        return str(number)
    return sp.cast(sp.string(value), column_type, False)


def violation(sp: Spelling, rule: Rule, column_type: str | None, entity: Entity | None = None) -> str:
    """The violation predicate of a rule over the judged row; fires only when SQL TRUE. `entity`:
    whose columns (their types, which are pii) an expression rule reads (lower/authored.py)."""
    v = sp.ident(rule.column) if rule.column else ""
    k = rule.kind
    if k == "coercible":
        return f"_c__{rule.column}"
    if k == "not_null":
        # A NULL that a failed cast produced belongs to `coercible`; not_null judges absent values.
        return sp.sql("({} is null and not _c__{})", v, rule.column)
    if k in ("range", "length"):
        if k == "range":
            subject, bound = v, lambda b: typed_literal(sp, str(b), column_type)
        else:
            subject, bound = sp.call("char_length", Sql(v)), lambda b: str(int(b))
        parts = []
        if rule.param("min") is not None:
            parts.append(f"{subject} < {bound(rule.param('min'))}")
        if rule.param("max") is not None:
            parts.append(f"{subject} > {bound(rule.param('max'))}")
        return "(" + sp.join("or", parts) + ")"
    if k == "pattern":
        return sp.sql("not ({})", sp.call("regex_matches", Sql(v), rule.param("regex")))
    if k in ("in_set", "in_enum"):
        values = rule.param("values") or ()
        if not values:
            return sp.sql("({} is not null)", v)
        if column_type in (None, "string", "variant"):
            target = v if column_type == "string" else sp.cast(v, "string", False)
            members = [sp.string(x) for x in values]
        # Typed columns compare typed values: the text of 1.50 is not the text of 1.5.
        elif column_type == "bool":
            target, members = v, [sp.kw(x) for x in values]
        else:
            target, members = v, [typed_literal(sp, x, column_type) for x in values]
        return sp.sql("{} not in ({})", target, ", ".join(members))
    if k == "unique":
        # Rules run after dedupe: only winners count towards a repeat.
        return sp.sql("({v} is not null and sum(case when _dedupe_rank = 1 then 1 else 0 end) over (partition by {v}) > 1)", v=v)
    if k == "normalize":
        return sp.sql("not ({})", sp.call("is_nfc", Sql(v)))
    if k == "charset":
        return sp.call("charset_violates", Sql(v), Raw(sp.charset_ranges(rule.param("ranges"))), rule.param("mode"))
    if k == "expression":
        private, types, owner = frozenset(), {}, ""
        if entity is not None:
            types = {**dict(LINEAGE_TYPES), **{c.name: c.type for c in entity.columns}}
            private, owner = pii_columns(entity), entity.name
        refusal = (f"assay: expression rule {rule.name} of {owner} could not cast a value of a pii field (not shown); "
                   "with try_cast the rule judges such a value instead of stopping the build")
        return sp.sql("not ({})", authored(sp, rule.param("expr"), private, refusal, types))
    if k == "referential":
        present = sp.join("and", (sp.sql("{} is not null", sp.ident(c)) for c, _p in rule.param("columns")))
        return sp.sql("({} and _probe__{} is null)", present, rule.param("relationship"))
    raise ValueError(f"unknown rule kind {k}")  # pragma: no cover - validation refuses it


def scoped(sp: Spelling, rule: Rule, predicate: str, before_dedupe: bool = False) -> str:
    """Field rules judge their own mapping's rows; losers of the dedupe and superseded deliveries
    (no `_dedupe_rank`) are never judged. A rule `before_dedupe` judges every latest delivery,
    losers included (decision 0018)."""
    return "(" + sp.join("and", judged_rows(sp, rule, before_dedupe) + [predicate]) + ")"


def judged_rows(sp: Spelling, rule: Rule, before_dedupe: bool = False) -> list[str]:
    """The conditions (ANDed) that hold on exactly the rows ``rule`` judges (see `scoped`)."""
    conds = ["_delivery_rank = 1" if before_dedupe else "_dedupe_rank = 1"]
    if rule.mapping is not None:
        conds.append(f"_mapping = {sp.string(rule.mapping)}")
    return conds


def judges_the_dedupe(rule: Rule, dedupe_columns: frozenset) -> bool:
    """The `coercible` rule of a column the dedupe order reads (always `fail`): a value that does
    not cast there decides which delivery wins, so it is judged on every latest delivery, before
    the dedupe, and not only on the winner (decision 0018)."""
    return rule.kind == "coercible" and rule.column in dedupe_columns


def rule_column(sp: Spelling, rule: Rule, column_type: str | None, dedupe_columns: frozenset = frozenset(),
                entity: Entity | None = None) -> str:
    """The `_r__<rule>` column: the scoped violation, FALSE when unknown."""
    before = judges_the_dedupe(rule, dedupe_columns)
    judged = violation(sp, rule, column_type, entity)
    return sp.sql("coalesce({}, false) as _r__{}", scoped(sp, rule, judged, before), rule.name)
