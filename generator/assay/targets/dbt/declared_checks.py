"""Declared table checks (document 000) of an entity, as one measuring query per table.

The generator writes, beside an entity's audits, a macro
``default__assay_declared__<entity>(candidate)`` returning::

    {'table': '<entity>', 'results_schema': '<meta schema>',
     'sql': <one SELECT measuring every declared check on the candidate>,
     'checks': [<descriptor>, ...]}

The ``assay_entity`` materialization runs the SELECT once (never one query per check), reads
each check's numbers out of its one row through the descriptor, decides pass/fail in Jinja,
records every result in ``<meta>.assay_check_results`` and sets the table back when a
``required`` check failed (docs/checks.md, docs/decisions/0500-0504).

Every column of the measuring row is either a count (an integer) or a value cast to text in
SQL, so nothing goes through a float and ``assay checks`` can render 000's exact sentences
from the recorded text later. Comparisons against ``value_range`` bounds happen in SQL
against a decimal literal of the bound's own precision, so they are exact too.
"""

from __future__ import annotations

from typing import Any, Optional

from ...checks.declared import DeclaredCheck
from ...ir.model import Entity, Project
from .spelling import jstr, qi, sql_type
from .naming import audits_macro_name

RESULTS_TABLE = "assay_check_results"  # also the name of the node that creates it
NUMERIC_TYPES = ("int",)
INDENT = "    "
CANDIDATE = "{{ candidate }}"


def declared_macro_name(entity: Entity) -> str:
    """Derived from the audits macro name, so the materialization finds it from the one
    ``assay_audits`` config value the entity model already carries."""
    return audits_macro_name(entity).replace("assay_audits__", "assay_declared__")


def is_numeric(assay_type: str) -> bool:
    return assay_type in NUMERIC_TYPES or assay_type.startswith("decimal")


def continuity_domain(assay_type: str) -> Optional[str]:
    """The domain a continuity check measures in, or None for a column with no distance
    between values (text, booleans, JSON)."""
    if assay_type in ("timestamp", "date"):
        return assay_type
    return "numeric" if is_numeric(assay_type) else None


#: What one unit of the measured gap is worth in seconds' denominators: a timestamp gap is
#: measured in microseconds (an exact integer on every engine), a date gap in seconds.
GAP_SCALE = {"timestamp": 1_000_000, "date": 1, "numeric": 1}


def _column_type(entity: Entity, name: str) -> str:
    col = entity.column(name)
    return col.type if col is not None else "string"


def _text(expr: str) -> str:
    return f"cast({expr} as {sql_type('string')})"


def decimal_literal(bound: str) -> str:
    """A ``value_range`` bound as a decimal literal of exactly its own precision and scale,
    so the comparison is exact (never a float) on every engine."""
    digits = bound.lstrip("-")
    whole, _, frac = digits.partition(".")
    scale = len(frac)
    precision = min(max(len(whole) + scale, scale + 1, 1), 38)
    return f"cast('{bound}' as {sql_type(f'decimal({precision},{scale})')})"


def jinja_literal(value: Any) -> str:
    """A Python value as a Jinja literal (JSON is not one: Jinja spells null ``none``)."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return jstr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(jinja_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{jstr(k)}: {jinja_literal(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no Jinja literal for {type(value).__name__}")


def _bounds(check: DeclaredCheck) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("max_null_ppm", "min_value", "max_value", "max_gap_seconds", "min_rows", "max_rows"):
        value = getattr(check, name)
        if value is not None:
            out[name] = value
    return out


class _Query:
    """Collects the select items and CTEs of the one measuring query."""

    def __init__(self) -> None:
        self.base: list[str] = ["count(*) as assay_rows"]
        self.ctes: list[str] = []
        self.joins: list[str] = []
        self.outer: list[str] = []

    def sql(self) -> str:
        # Every part reads the candidate itself: a CTE over it that several parts read would be
        # materialized (a copy of the table) by PostgreSQL 12+ and DuckDB (benchmarks/checks.py).
        lines = ["with assay_m as (", f"{INDENT}select"]
        lines.append(",\n".join(f"{INDENT * 2}{item}" for item in self.base))
        lines += [f"{INDENT}from {CANDIDATE}", ")"]
        for cte in self.ctes:
            lines[-1] += ","
            lines.append(cte)
        lines.append("select")
        lines.append(",\n".join(f"{INDENT}{item}" for item in ["m.*", *self.outer]))
        lines.append("from assay_m as m")
        lines += self.joins
        return "\n".join(lines)


def _measure(check: DeclaredCheck, n: int, entity: Entity, q: _Query) -> dict[str, Any]:
    """Add one check's measurements to the query; return its descriptor."""
    types = [_column_type(entity, c) for c in check.columns]
    desc: dict[str, Any] = {
        "check_id": check.check_id,
        "kind": check.kind,
        "enforcement": check.enforcement,
        "blocking": check.enforcement == "required",
        "position": n,
        "columns": list(check.columns),
        "types": types,
        "bounds": _bounds(check),
        "counts": {"rows": "assay_rows"},
        "texts": {},
        # row_expectation reads a count, not the rows: it still evaluates over budget (000).
        "row_reading": check.kind != "row_expectation",
    }
    p = f"m{n}_"
    if check.kind == "null_ceiling":
        c = qi(check.columns[0])
        q.base.append(f"count(*) - count({c}) as {p}nulls")
        desc["counts"]["nulls"] = f"{p}nulls"
    elif check.kind == "value_range":
        c = qi(check.columns[0])
        desc["orderable"] = is_numeric(types[0])
        if desc["orderable"]:
            outside = f"{c} < {decimal_literal(check.min_value)} or {c} > {decimal_literal(check.max_value)}"
            q.base += [
                f"count({c}) as {p}values",
                f"coalesce(sum(case when {outside} then 1 else 0 end), 0) as {p}outside",
                # The smallest offending value: one deterministic choice (decision 0501).
                f"{_text(f'min(case when {outside} then {c} end)')} as {p}first",
                f"{_text(f'min({c})')} as {p}min",
                f"{_text(f'max({c})')} as {p}max",
            ]
            desc["counts"].update(values=f"{p}values", outside=f"{p}outside")
            desc["texts"].update(first=f"{p}first", min=f"{p}min", max=f"{p}max")
    elif check.kind == "key_uniqueness":
        cols = [qi(c) for c in check.columns]
        keys = [f"{_text(c)} as {p}key_{i}" for i, c in enumerate(cols, 1)]
        order = ", ".join(f"{c} nulls last" for c in cols)
        # GROUP BY puts NULL key parts together: a repeated (NULL, 'x') is a repeat (decision 0500).
        q.ctes.append(
            "\n".join(
                [
                    f"assay_k{n} as (",
                    f"{INDENT}select sum(assay_n) over () as {p}repeats, "
                    + ", ".join(keys)
                    + f", row_number() over (order by {order}) as assay_rn",
                    f"{INDENT}from (select {', '.join(cols)}, count(*) as assay_n from {CANDIDATE} "
                    f"group by {', '.join(cols)} having count(*) > 1) as assay_g",
                    ")",
                ]
            )
        )
        q.joins.append(f"left join assay_k{n} as k{n} on k{n}.assay_rn = 1")
        q.outer.append(f"coalesce(k{n}.{p}repeats, 0) as {p}repeats")
        q.outer += [f"k{n}.{p}key_{i}" for i in range(1, len(cols) + 1)]
        desc["counts"]["repeats"] = f"{p}repeats"
        desc["texts"]["key"] = [f"{p}key_{i}" for i in range(1, len(cols) + 1)]
    elif check.kind == "continuity":
        c = qi(check.columns[0])
        domain = continuity_domain(types[0])
        desc["domain"] = domain
        desc["gap_scale"] = GAP_SCALE.get(domain or "", 1)
        if domain is not None:
            # The distinct values are counted where they are listed anyway (the gap part): a
            # count(distinct) beside the other aggregates made PostgreSQL sort the whole table
            # and give up its parallel aggregate (benchmarks/checks.py).
            q.base += [f"{_text(f'min({c})')} as {p}only"]
            gap = "{{ assay.continuity_gap('assay_lo', 'assay_hi', " + jstr(domain) + ") }}"
            # Repeated values collapse first (DISTINCT); the widest gap wins, ties go to the
            # earliest pair, so the endpoints are the same on every engine.
            q.ctes.append(
                "\n".join(
                    [
                        f"assay_c{n} as (",
                        f"{INDENT}select {p}gap, {_text('assay_lo')} as {p}from, {_text('assay_hi')} as {p}to, {p}distinct,",
                        f"{INDENT * 2}row_number() over (order by {p}gap desc, assay_lo) as assay_rn",
                        f"{INDENT}from (",
                        f"{INDENT * 2}select assay_lo, assay_hi, {gap} as {p}gap, assay_count as {p}distinct",
                        f"{INDENT * 2}from (select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi, "
                        "count(*) over () as assay_count",
                        f"{INDENT * 3}from (select distinct {c} as assay_v from {CANDIDATE} where {c} is not null) as assay_d) as assay_p",
                        f"{INDENT * 2}where assay_lo is not null",
                        f"{INDENT}) as assay_w",
                        ")",
                    ]
                )
            )
            q.joins.append(f"left join assay_c{n} as c{n} on c{n}.assay_rn = 1")
            q.outer += [f"c{n}.{p}gap", f"{_text(f'c{n}.{p}gap')} as {p}gap_text", f"c{n}.{p}from", f"c{n}.{p}to",
                        # no pair to measure: one distinct value when there is a smallest, else none
                        f"coalesce(c{n}.{p}distinct, case when m.{p}only is null then 0 else 1 end) as {p}distinct"]
            desc["counts"]["distinct"] = f"{p}distinct"
            desc["gap"] = f"{p}gap"
            desc["texts"].update(only=f"{p}only", gap=f"{p}gap_text", **{"from": f"{p}from", "to": f"{p}to"})
    return desc


def _key_match(cols: list[str]) -> str:
    # NULL key parts repeat like any other value (decision 0501), so the join says so.
    return " and ".join(f"assay_r.{c} is not distinct from assay_d.{c}" for c in cols)


def rows_query(check: DeclaredCheck, entity: Entity) -> Optional[str]:
    """The rows of the candidate a failing check found (Jinja SQL over ``candidate``), for
    ``assay check rows`` (decision 0532); None for a check with no rows to show
    (``row_expectation``, a range over a type with no order, continuity over text)."""
    types = [_column_type(entity, c) for c in check.columns]
    if check.kind == "null_ceiling":
        c = qi(check.columns[0])
        return f"select * from {{{{ candidate }}}} where {c} is null"
    if check.kind == "value_range":
        if not is_numeric(types[0]):
            return None
        c = qi(check.columns[0])
        return (f"select * from {{{{ candidate }}}} where {c} < {decimal_literal(check.min_value)} "
                f"or {c} > {decimal_literal(check.max_value)}")
    if check.kind == "key_uniqueness":
        cols = [qi(c) for c in check.columns]
        return (f"select assay_r.* from {{{{ candidate }}}} as assay_r join (select {', '.join(cols)} from "
                f"{{{{ candidate }}}} group by {', '.join(cols)} having count(*) > 1) as assay_d on {_key_match(cols)}")
    if check.kind == "continuity":
        domain = continuity_domain(types[0])
        if domain is None:
            return None
        c = qi(check.columns[0])
        gap = "{{ assay.continuity_gap('assay_lo', 'assay_hi', " + jstr(domain) + ") }}"
        ceiling = int(check.max_gap_seconds) * GAP_SCALE[domain]
        # Both ends of every gap above the ceiling.
        return (f"select * from {{{{ candidate }}}} where {c} in (with assay_g as (select assay_lo, assay_hi from "
                f"(select lag(assay_v) over (order by assay_v) as assay_lo, assay_v as assay_hi from (select distinct {c} "
                f"as assay_v from {{{{ candidate }}}} where {c} is not null) as assay_d) as assay_p where assay_lo is not null "
                f"and {gap} > {ceiling}) select assay_lo from assay_g union all select assay_hi from assay_g)")
    return None


def redacted_columns(entity: Entity) -> list[str]:
    """Columns kept out of captured rows: the bronze columns ``redact:`` names (no mapping may
    read them, so they reach captured rows only through a SQL check that reads bronze)."""
    return sorted(set(entity.redact))


def capture_macro_name(entity: Entity) -> str:
    return audits_macro_name(entity).replace("assay_audits__", "assay_capture__")


def capture_macro(entity: Entity) -> str:
    """What ``assay._capture_check_rows`` keeps out of an entity's captured rows; empty text for
    an entity that redacts nothing (the package then keeps every column)."""
    if not entity.redact or not (entity.declared_checks or entity.sql_checks):
        return ""
    return "\n".join([
        f"{{% macro default__{capture_macro_name(entity)}() %}}",
        "  {{ return({'redact': " + jinja_literal(redacted_columns(entity)) + "}) }}",
        "{% endmacro %}",
        "",
    ])


def declared_query(entity: Entity) -> tuple[str, list[dict[str, Any]]]:
    """The one measuring query of an entity's declared checks (Jinja SQL over ``candidate``)
    and the descriptors that say which column of its row each check reads."""
    q = _Query()
    descriptors = [_measure(check, n, entity, q) for n, check in enumerate(entity.declared_checks, 1)]
    return q.sql(), descriptors


def declared_macro(entity: Entity, project: Project) -> str:
    """The macro the materialization calls; empty text for an entity with no declared checks."""
    if not entity.declared_checks:
        return ""
    sql, descriptors = declared_query(entity)
    lines = [
        f"{{% macro default__{declared_macro_name(entity)}(candidate) %}}",
        "  {% set checks = [] %}",
    ]
    for d in descriptors:
        lines.append(f"  {{% do checks.append({jinja_literal(d)}) %}}")
    for n, check in enumerate(entity.declared_checks):
        rows = rows_query(check, entity)
        if rows is not None:
            # The violating rows, captured only when the check fails (assay check rows).
            lines += [f"  {{% set rows_sql %}}{rows}{{% endset %}}",
                      f"  {{% do checks[{n}].update({{'rows_sql': rows_sql}}) %}}"]
    scan_bytes, time_seconds = project.budget_of(entity.name)
    lines += [
        "  {% set sql %}",
        sql,
        "  {% endset %}",
        "  {{ return({'table': "
        + jstr(entity.name)
        + ", 'results_schema': "
        + jstr(project.schema("meta"))
        + f", 'budget': {{'scan_bytes': {scan_bytes}, 'time_seconds': {time_seconds}}}"
        + ", 'sql': sql, 'checks': checks}) }}",
        "{% endmacro %}",
        "",
    ]
    return "\n".join(lines)


def results_model_sql(project: Project, header: str) -> Optional[str]:
    """The ``assay_check_results`` node: an empty incremental model that creates the results
    table in the meta schema. Entities with declared checks depend on it, so the table exists
    before they run in parallel (a create race fails the run on DuckDB); ``full_refresh=false``
    keeps the history of results through ``--full-refresh``."""
    if not any(e.declared_checks or e.sql_checks for e in project.entities) and not (
            any(t.declared_checks for t in project.tables) or project.sql_checks):  # tables assay only reads
        return None
    return "\n".join(
        [
            header,
            "{{ config(materialized='incremental', schema="
            + jstr(project.schema("meta"))
            + ", full_refresh=false, on_schema_change='ignore', tags=['assay'],",
            "    post_hook=\"create table if not exists {{ this.incorporate(path={'identifier': 'assay_check_rows'}) }} as "
            "{{ assay.check_rows_select() }}\") }}",
            "-- Rows are inserted by the assay_entity materialization; this node only creates the table,",
            "-- and (post-hook) the table of the rows failing checks found (assay check rows).",
            "{{ assay.check_results_select() }}",
            "",
        ]
    )
