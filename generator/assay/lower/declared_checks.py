"""The one measuring query of a table's declared checks (document 000), for every target.

Every declared check of a table is measured in ONE query over the freshly built relation
(decision 0500); this module decides that query and the descriptor of each check (which column
of the query's single row the check reads), and a target only spells it: the dbt target over
``{{ candidate }}`` inside the materialization, the SQLMesh target over ``@this_model`` in a
post-statement. Both then decide the verdict from the recorded numbers in one place
(``assay.checks.recorded``, and its Jinja twin, tested to agree).

Every output column is a count (an integer) or a value cast to text in SQL, and every column is
named, so nothing goes through a float and the recorders can read the row by name (decision 0501).
Every part reads the relation itself: a CTE over it that several parts read is materialized (a
copy of the table) by PostgreSQL 12+ and DuckDB (benchmarks/checks.py).
"""

from __future__ import annotations

from typing import Any, Optional

from ..checks.declared import DeclaredCheck
from ..ir.model import Entity
from ..privacy import HIDDEN, pii_columns
from .anomaly import Anomalies
from .history import History, HistoryRelations
from .spelling import Sql, Spelling
from .staged import deduped, diverted, evaluated as evaluated_row

NUMERIC_TYPES = ("int",)
BOUND_NAMES = ("max_null_ppm", "min_value", "max_value", "max_gap_seconds", "min_rows", "max_rows", "max_rate", "rule",
               "factor", "floor", "metric", "min_history")
RATE_KINDS = ("quarantine_rate", "flag_rate", "rule_rate")
#: Change limits (decision 0981): this run's staged counts against the mart's previous runs.
INCREASE_KINDS = ("quarantine_increase", "rule_increase", "volume_change")

#: What one unit of the measured gap is worth in seconds' denominators: a timestamp gap is
#: measured in microseconds (an exact integer on every engine), a date gap in seconds.
GAP_SCALE = {"timestamp": 1_000_000, "date": 1, "numeric": 1}


def is_numeric(assay_type: str) -> bool:
    return assay_type in NUMERIC_TYPES or assay_type.startswith("decimal")


def continuity_domain(assay_type: str) -> Optional[str]:
    """The domain a continuity check measures in, or None for a column with no distance
    between values (text, booleans, JSON)."""
    if assay_type in ("timestamp", "date"):
        return assay_type
    return "numeric" if is_numeric(assay_type) else None


def column_type(entity: Entity, name: str) -> str:
    col = entity.column(name)
    return col.type if col is not None else "string"


def _grid(assay_type: str, bound: str) -> tuple[int, int]:
    """(integer digits, scale) of the decimal a bound is compared as: the column's own where its
    type is known (`int` is a 64-bit integer: 19 digits), so that no engine widens the column to
    the literal's scale (DuckDB compares decimal(38,2) with decimal(19,18) as decimal(38,18), which
    overflows on large values); else as many fraction digits as 38 digits leave the bound."""
    if assay_type == "int":
        return 19, 0
    if "(" in assay_type:
        precision, scale = (int(x) for x in assay_type[assay_type.index("(") + 1:-1].split(","))
        return precision - scale, scale
    whole = len(bound.lstrip("-").partition(".")[0].lstrip("0"))
    scale = max(0, min(len(bound.partition(".")[2]), 38 - whole))
    return 38 - scale, scale


def outside_range(sp: Spelling, check: DeclaredCheck, assay_type: str, below_only: bool = False) -> str:
    """The predicate of a value outside a `value_range` check's bounds, exact for the column's
    type: 000's grammar allows bounds of 39 integer and 18 fraction digits, which no engine's
    decimal holds (the measuring query then failed, and every check of the table with it).

    A bound is moved onto the column's grid outward-safe (the minimum up, the maximum down): for
    a value on the grid, v < 0.55 is v < 0.6 at scale 1, so the comparison is the same. A bound
    beyond every value the column can hold makes its side constant."""
    import decimal as _d

    c = sp.ident(check.columns[0])
    parts = []
    sides = (("<", check.min_value, _d.ROUND_CEILING), (">", check.max_value, _d.ROUND_FLOOR))
    for op, text, rounding in sides[:1] if below_only else sides:
        whole, scale = _grid(assay_type, text)
        known = "(" in assay_type or assay_type == "int"
        limit = _d.Decimal(10) ** (whole if known else 38)
        with _d.localcontext() as ctx:
            ctx.prec = 100  # the grammar's widest bound is 57 digits
            near = _d.Decimal(text).quantize(_d.Decimal(1).scaleb(-scale), rounding=rounding)
            if not known and scale and abs(near) >= _d.Decimal(10) ** whole:
                # 99.99 rounded up at one digit is 100.0: one fraction digit less keeps 38 digits
                whole, scale = whole + 1, scale - 1
                near = _d.Decimal(text).quantize(_d.Decimal(1).scaleb(-scale), rounding=rounding)
        if (op == "<" and near <= -limit) or (op == ">" and near >= limit):
            continue  # no value lies beyond this bound
        if abs(near) >= limit:
            parts.append(sp.sql("{} is not null", c))  # every value does
            continue
        # the column's own type where known; else the fewest digits that hold the bound, which
        # widen an unknown column's comparison the least
        digits = whole + scale if known else max(len(format(abs(near), "f").partition(".")[0].lstrip("0")) + scale, scale + 1)
        literal = sp.cast(sp.string(format(near, "f")), f"decimal({digits},{scale})", False)
        parts.append(sp.sql("{} {} {}", c, op, literal))
    return sp.join("or", parts) if parts else sp.kw("false")


def bounds(check: DeclaredCheck) -> dict[str, Any]:
    """The bounds a check states, as the results table keeps them (decision 0502)."""
    return {name: getattr(check, name) for name in BOUND_NAMES if getattr(check, name) is not None}


class MeasuringQuery:
    """The select items and CTEs of the one measuring query, every output column named."""

    def __init__(self, sp: Spelling, relation: str, staged: str = "", history: Optional[History] = None,
                 key_proven: bool = False) -> None:
        self.sp = sp
        # The entity's own key audit has passed on this relation before the query runs (decision 1010).
        self.key_proven = key_proven
        self.history = history
        self.relation = relation
        # The entity's staged relation, which rate thresholds count (decision 0980), and what
        # they count there: one aggregate over it, read once for every rate of the table.
        self.staged = staged
        self.staged_counts: list[tuple[str, str]] = []
        self.base: list[tuple[str, str]] = [(sp.sql("count(*)"), "assay_rows")]
        self.ctes: list[str] = []
        self.joins: list[str] = []
        self.outer: list[tuple[str, str]] = []
        self.anomalies: Optional[Anomalies] = None

    def text(self, expr: str) -> str:
        return self.sp.cast(expr, "string", False)

    def value(self, expr: str, hidden: bool) -> str:
        """A measured value of a column as text; for a column whose values assay never shows
        (privacy.py: a `pii` field), the HIDDEN marker in its place, NULL staying NULL, so no
        result, event, sentence or dbt error carries it (decision 0937)."""
        if not hidden:
            return self.text(expr)
        return self.sp.sql("case when {} is null then null else {} end", expr, self.sp.string(HIDDEN))

    def base_items(self) -> list[str]:
        """The measuring aggregates, each `expr as name`."""
        return [self.sp.sql("{} as {}", e, n) for e, n in self.base]

    def outer_items(self) -> list[str]:
        """What the final select adds from the CTEs' single rows, each `expr as name`."""
        return [self.sp.sql("{} as {}", e, n) for e, n in self.outer]

    def sql(self) -> str:
        sp, i = self.sp, self.sp.indent
        lines = [sp.sql("with assay_m as ("), sp.sql("{}select", i)]
        lines.append(",\n".join(f"{i * 2}{item}" for item in self.base_items()))
        lines += [sp.sql("{}from {}", i, self.relation), ")"]
        for cte in self.ctes:
            lines[-1] += ","
            lines.append(cte)
        items = [sp.sql("m.{} as {}", n, n) for _e, n in self.base] + self.outer_items()
        lines.append(sp.sql("select"))
        lines.append(",\n".join(f"{i}{item}" for item in items))
        lines.append(sp.sql("from assay_m as m"))
        lines += self.joins
        return "\n".join(lines)

    def staged_count(self, condition: str, name: str) -> str:
        """The column holding how many staged rows meet ``condition`` (added once per name)."""
        if all(n != name for _e, n in self.staged_counts):
            summed = self.sp.sql("coalesce(sum(case when {} then 1 else 0 end), 0)", condition)
            self.staged_counts.append((self.sp.cast(summed, "int", False), name))
        return name

    def finish(self) -> None:
        """Add the staged aggregate, when a rate reads it, as one CTE crossed with the row, and
        the previous runs' numbers when a change limit reads them."""
        if self.staged_counts:
            self._finish_staged()
        if self.history is not None and self.history.used:
            self.ctes += self.history.ctes(self.sp.run_id())
            self.joins += self.history.joins()
            self.outer += self.history.outer()
        if self.anomalies is not None and self.anomalies.used:
            self.ctes += self.anomalies.ctes(self.sp.run_id())
            self.joins += self.anomalies.joins()
            self.outer += self.anomalies.outer()

    def _finish_staged(self) -> None:
        sp, i = self.sp, self.sp.indent
        items = ",\n".join(sp.sql("{}{} as {}", i * 2, e, n) for e, n in self.staged_counts)
        self.ctes.append(sp.sql("assay_s as (\n{i}select\n{items}\n{i}from {rel}\n)", i=i, items=items, rel=self.staged))
        self.joins.append(sp.sql("{} join assay_s as s", sp.kw("cross")))
        self.outer += [(f"s.{n}", n) for _e, n in self.staged_counts]


def measure_check(check: DeclaredCheck, n: int, entity: Entity, q: MeasuringQuery) -> dict[str, Any]:
    """Add one check's measurements to the query; return its descriptor."""
    sp, i, rel = q.sp, q.sp.indent, q.relation
    types = [column_type(entity, c) for c in check.columns]
    desc: dict[str, Any] = {
        "check_id": check.check_id,
        "kind": check.kind,
        "enforcement": check.enforcement,
        "blocking": check.enforcement == "required",
        "position": n,
        "columns": list(check.columns),
        "types": types,
        "bounds": bounds(check),
        "counts": {"rows": "assay_rows"},
        "texts": {},
        # row_expectation reads a count, not the rows: it still evaluates over budget (000).
        "row_reading": check.kind != "row_expectation",
    }
    p = f"m{n}_"
    private = pii_columns(entity)
    if check.kind in RATE_KINDS:
        measure_rate(check, n, q, desc)
    elif check.kind in INCREASE_KINDS:
        measure_increase(check, n, q, desc)
    elif check.kind == "anomaly":
        measure_anomaly(check, n, q, desc)
    elif check.kind == "null_ceiling":
        c = sp.ident(check.columns[0])
        q.base.append((sp.sql("count(*) - count({})", c), f"{p}nulls"))
        desc["counts"]["nulls"] = f"{p}nulls"
    elif check.kind == "value_range":
        c = sp.ident(check.columns[0])
        hidden = check.columns[0] in private
        desc["orderable"] = is_numeric(types[0])
        if desc["orderable"]:
            outside = outside_range(sp, check, types[0])
            q.base += [
                (sp.sql("count({})", c), f"{p}values"),
                (sp.sql("coalesce(sum(case when {} then 1 else 0 end), 0)", outside), f"{p}outside"),
                # The smallest offending value: one deterministic choice (decision 0501).
                (q.value(sp.sql("min(case when {} then {} end)", outside, c), hidden), f"{p}first"),
                (q.value(sp.sql("min({})", c), hidden), f"{p}min"),
                (q.value(sp.sql("max({})", c), hidden), f"{p}max"),
            ]
            desc["counts"].update(values=f"{p}values", outside=f"{p}outside")
            desc["texts"].update(first=f"{p}first", min=f"{p}min", max=f"{p}max")
            if hidden:
                # The sentence says which bound the hidden value broke: the smallest offending
                # value lies below the minimum exactly when any value does.
                below = outside_range(sp, check, types[0], below_only=True)
                q.base.append((sp.sql("case when sum(case when {} then 1 else 0 end) > 0 then {} else {} end",
                                      below, sp.string("below"), sp.string("above")), f"{p}side"))
                desc["texts"]["side"] = f"{p}side"
    elif check.kind == "key_uniqueness":
        cols = [sp.ident(c) for c in check.columns]
        keys = [sp.sql("{} as {}key_{}", q.value(c, name in private), p, k)
                for k, (c, name) in enumerate(zip(cols, check.columns), 1)]
        order = ", ".join(sp.sql("{} nulls last", c) for c in cols)
        listed = ", ".join(cols)
        # When the entity's key audit has passed on this relation, no entity key without a NULL
        # part repeats, so neither does any tuple holding it; only rows with a NULL key part
        # (which that audit does not judge, and GROUP BY still puts together) can repeat, so only
        # those rows are grouped (decision 1010).
        where = ""
        if q.key_proven and key_audit_proves(check, entity):
            # A repeating group agrees on every key column, so its rows all have the NULL part.
            key_parts = (sp.sql("{} is null", sp.ident(k)) for k in check.columns if k in entity.key)
            where = sp.sql(" where {}", sp.join("or", key_parts))
        # GROUP BY puts NULL key parts together: a repeated (NULL, 'x') is a repeat (decision 0500).
        q.ctes.append("\n".join([
            sp.sql("assay_k{} as (", n),
            sp.sql("{i}select sum(assay_n) over () as {p}repeats, {keys}, row_number() over (order by {order}) as assay_rn",
                   i=i, p=p, keys=", ".join(keys), order=order),
            sp.sql("{i}from (select {c}, count(*) as assay_n from {rel}{w} group by {c} having count(*) > 1) as assay_g",
                   i=i, c=listed, rel=rel, w=where),
            ")",
        ]))
        q.joins.append(sp.sql("left join assay_k{n} as k{n} on k{n}.assay_rn = 1", n=n))
        q.outer.append((sp.sql("coalesce(k{}.{}repeats, 0)", n, p), f"{p}repeats"))
        q.outer += [(f"k{n}.{p}key_{k}", f"{p}key_{k}") for k in range(1, len(cols) + 1)]
        desc["counts"]["repeats"] = f"{p}repeats"
        desc["texts"]["key"] = [f"{p}key_{k}" for k in range(1, len(cols) + 1)]
    elif check.kind == "continuity":
        c = sp.ident(check.columns[0])
        domain = continuity_domain(types[0])
        desc["domain"] = domain
        desc["gap_scale"] = GAP_SCALE.get(domain or "", 1)
        if domain is not None:
            # The distinct values are counted where they are listed anyway (the gap part): a
            # count(distinct) beside the other aggregates made PostgreSQL sort the whole table
            # and give up its parallel aggregate (benchmarks/checks.py).
            hidden = check.columns[0] in private
            q.base.append((q.value(sp.sql("min({})", c), hidden), f"{p}only"))
            gap = sp.call("continuity_gap", Sql("assay_lo"), Sql("assay_hi"), domain)
            # Repeated values collapse first (DISTINCT); the widest gap wins, ties go to the
            # earliest pair, so the endpoints are the same on every engine.
            q.ctes.append("\n".join([
                sp.sql("assay_c{} as (", n),
                sp.sql("{i}select {p}gap, {lo} as {p}from, {hi} as {p}to, {p}distinct,",
                       i=i, p=p, lo=q.value("assay_lo", hidden), hi=q.value("assay_hi", hidden)),
                sp.sql("{}row_number() over (order by {}gap desc, assay_lo) as assay_rn", i * 2, p),
                sp.sql("{}from (", i),
                sp.sql("{i}select assay_lo, assay_hi, {gap} as {p}gap, assay_count as {p}distinct", i=i * 2, gap=gap, p=p),
                sp.sql("{}from (select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi, "
                       "count(*) over () as assay_count", i * 2),
                sp.sql("{i}from (select distinct {c} as assay_v from {rel} where {c} is not null) as assay_d) as assay_p",
                       i=i * 3, c=c, rel=rel),
                sp.sql("{}where assay_lo is not null", i * 2),
                sp.sql("{}) as assay_w", i),
                ")",
            ]))
            q.joins.append(sp.sql("left join assay_c{n} as c{n} on c{n}.assay_rn = 1", n=n))
            # Over a pii column the gap is a difference of two values never shown: it is judged
            # here (`over`) and shown as the marker, as its ends are (decision 0937).
            gap_text = q.value(f"c{n}.{p}gap", True) if hidden else q.text(f"c{n}.{p}gap")
            q.outer += [
                (f"c{n}.{p}gap", f"{p}gap"),
                (gap_text, f"{p}gap_text"),
                (f"c{n}.{p}from", f"{p}from"),
                (f"c{n}.{p}to", f"{p}to"),
                # no pair to measure: one distinct value when there is a smallest, else none
                (sp.sql("coalesce(c{n}.{p}distinct, case when m.{p}only is null then 0 else 1 end)", n=n, p=p), f"{p}distinct"),
            ]
            desc["counts"]["distinct"] = f"{p}distinct"
            if hidden:
                ceiling = int(check.max_gap_seconds) * GAP_SCALE[domain]
                q.outer.append((sp.sql("case when c{}.{}gap > {} then 1 else 0 end", n, p, ceiling), f"{p}over"))
                desc["counts"]["over"] = f"{p}over"
            desc["gap"] = f"{p}gap"
            desc["texts"].update(only=f"{p}only", gap=f"{p}gap_text", **{"from": f"{p}from", "to": f"{p}to"})
    return desc


def _key_match(cols: list[str]) -> str:
    # NULL key parts repeat like any other value (decision 0501), so the join says so.
    return " and ".join(f"assay_r.{c} is not distinct from assay_d.{c}" for c in cols)


def failing_rows_query(check: DeclaredCheck, entity: Entity, sp: Spelling, relation: str) -> Optional[str]:
    """The rows of ``relation`` a failing check found, for ``assay check rows`` (decision 0532):
    the null rows of a null ceiling, the rows outside a numeric range, every row of a repeated
    key, the rows at both ends of each gap above a continuity ceiling. None for a check with no
    rows to show (``row_expectation``, a range over a type with no order, continuity over text,
    the rates, change limits and anomalies, which judge counts)."""
    types = [column_type(entity, c) for c in check.columns]
    if check.kind == "null_ceiling":
        return f"select * from {relation} where {sp.ident(check.columns[0])} is null"
    if check.kind == "value_range":
        if not is_numeric(types[0]):
            return None
        return f"select * from {relation} where {outside_range(sp, check, types[0])}"
    if check.kind == "key_uniqueness":
        cols = [sp.ident(c) for c in check.columns]
        return (f"select assay_r.* from {relation} as assay_r join (select {', '.join(cols)} from "
                f"{relation} group by {', '.join(cols)} having count(*) > 1) as assay_d on {_key_match(cols)}")
    if check.kind == "continuity":
        domain = continuity_domain(types[0])
        if domain is None:
            return None
        c = sp.ident(check.columns[0])
        # The gap is measured as the measuring query measures it, so the rows shown are the
        # ends of exactly the gaps the check counted.
        gap = sp.call("continuity_gap", Sql("assay_lo"), Sql("assay_hi"), domain)
        ceiling = int(check.max_gap_seconds) * GAP_SCALE[domain]
        return (f"select * from {relation} where {c} in (with assay_g as (select assay_lo, assay_hi from "
                f"(select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi from (select distinct {c} "
                f"as assay_v from {relation} where {c} is not null) as assay_d) as assay_p where assay_lo is not null "
                f"and {gap} > {ceiling}) select assay_lo from assay_g union all select assay_hi from assay_g)")
    return None


def redacted_columns(entity: Entity) -> list[str]:
    """Columns kept out of the rows a failing check found (both targets): the bronze columns
    ``redact:`` names (no mapping may read them, so they reach captured rows only through a SQL
    check that reads bronze), and the fields classified `pii` with the bronze columns they are
    read from (privacy.py)."""
    from ..privacy import hidden_names

    return sorted(set(entity.redact) | hidden_names(entity))


def key_audit_proves(check: DeclaredCheck, entity: Entity) -> bool:
    """Whether the entity's own blocking key audit speaks for this check's columns: a
    ``key_uniqueness`` check whose columns hold the whole entity key (in any order, other
    columns beside it) of an entity without ``dedupe:`` (the entities that get that audit, on
    both targets)."""
    return check.kind == "key_uniqueness" and not entity.dedupe and bool(entity.key) and set(entity.key) <= set(check.columns)


def proven_by_key_audit(entity: Entity) -> bool:
    """Whether the measuring query has a cheaper form once the key audit has passed."""
    return any(key_audit_proves(c, entity) for c in entity.declared_checks)


def measure_rate(check: DeclaredCheck, n: int, q: MeasuringQuery, desc: dict[str, Any]) -> None:
    """A rate threshold counts the entity's staged rows exactly as gold.mart_data_quality does
    (lower/mart.py): evaluated rows are those not deduped (staged.evaluated, late arrivals of an
    incremental ledger included), quarantined ones are routed quarantined or failed, flagged ones
    are kept with a failed rule, and a rule fires where its name is among the failed rules. Only counts are recorded; the verdict is decided from them (decision 0980)."""
    sp = q.sp
    evaluated = q.staged_count(evaluated_row(sp), "assay_evaluated")
    if check.kind == "quarantine_rate":
        failing = q.staged_count(diverted(sp), "assay_quarantined")
    elif check.kind == "flag_rate":
        flagged = sp.sql("_route = 'kept' and {} {}", sp.kw("not"), sp.call("quality_ok", Sql("_failed_rules")))
        failing = q.staged_count(flagged, "assay_flagged")
    else:
        failing = q.staged_count(sp.call("flags_contain", Sql("_failed_rules"), check.rule), f"m{n}_fires")
    desc["counts"].update(evaluated=evaluated, failing=failing)


def measure_increase(check: DeclaredCheck, n: int, q: MeasuringQuery, desc: dict[str, Any]) -> None:
    """A change limit reads this run's counts from the staged relation, as a rate does, and the
    previous successful runs' counts from the mart (assay.lower.history); only counts and run ids
    are recorded, and the verdict is decided from them (decision 0981)."""
    if q.history is None:
        raise ValueError(f"check {check.check_id} compares with earlier runs, and the target gave no history relations")
    sp = q.sp
    prev = q.history.run_columns()
    if check.kind == "volume_change":
        bronze = q.staged_count(sp.sql("{} or {}", evaluated_row(sp), deduped(sp)), "assay_bronze")
        desc["counts"].update(bronze=bronze, previous_bronze=prev["previous_bronze"], earlier_bronze=prev["earlier_bronze"])
        desc["texts"].update(previous_run=prev["previous_run"], earlier_run=prev["earlier_run"])
        return
    evaluated = q.staged_count(evaluated_row(sp), "assay_evaluated")
    if check.kind == "quarantine_increase":
        failing = q.staged_count(diverted(sp), "assay_quarantined")
        desc["counts"].update(evaluated=evaluated, failing=failing, previous_evaluated=prev["previous_evaluated"],
                              previous_failing=prev["previous_quarantined"])
    else:
        failing = q.staged_count(sp.call("flags_contain", Sql("_failed_rules"), check.rule), f"m{n}_fires")
        desc["counts"].update(evaluated=evaluated, failing=failing,
                              previous_failing=q.history.rule_column(check.rule, f"m{n}_prev_failing"))
    desc["texts"].update(previous_run=prev["previous_run"])


def measure_anomaly(check: DeclaredCheck, n: int, q: MeasuringQuery, desc: dict[str, Any]) -> None:
    """An anomaly check runs the detector's own query over the entity's earlier runs and this one
    (assay.lower.anomaly) and records its answer for this run; the verdict is decided from the
    recorded numbers (decision 1030)."""
    if q.history is None:
        raise ValueError(f"check {check.check_id} learns from earlier runs, and the target gave no history relations")
    if q.anomalies is None:
        q.anomalies = Anomalies(q.sp, q.history.entity, q.history, q.staged_count)
    counts = q.anomalies.add(check, n)
    columns = q.anomalies.columns(check.check_id)
    desc["counts"].update(counts, **columns["counts"])
    desc["texts"].update(columns["texts"])


def measuring_query(entity: Entity, sp: Spelling, relation: str, staged: str | None = None,
                    history: Optional[HistoryRelations] = None,
                    key_proven: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The one measuring query of an entity's declared checks over ``relation`` (as the target
    names the freshly built table), and the descriptors naming the column of its row each check
    reads. Rate thresholds count ``staged`` (the entity's staged relation unless told); change
    limits also read the entity's earlier runs where ``history`` says. With ``key_proven`` (only
    when the entity's key audit has passed on ``relation`` before this query runs), a check over
    the entity key groups only the rows with a NULL key part (decision 1010)."""
    past = History(sp, entity.name, history) if history is not None else None
    q = MeasuringQuery(sp, relation, staged or sp.staged(entity), past, key_proven)
    descriptors = [measure_check(check, n, entity, q) for n, check in enumerate(entity.declared_checks, 1)]
    q.finish()
    return q.sql(), descriptors
