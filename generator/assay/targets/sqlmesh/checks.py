"""Table checks on the SQLMesh target: declared checks (000) and SQL check files (002).

An entity with checks gets, in its model file (decisions 0210-0214):

- after the query, post-statements that measure and record, run by SQLMesh inside the
  evaluation right after it wrote the table: ``@assay_record_declared_checks`` (every declared
  check in ONE measuring query over ``@this_model``) and one ``@assay_record_sql_check`` per SQL
  check file (the file's query with its own table replaced by ``@this_model``). Both insert into
  ``<meta>.assay_check_results``, the dbt target's table, under SQLMesh's run id (0204);
- one inline audit per check, ``assay_check__<id>`` or ``assay_sql_check__<name>``, which
  returns the recorded result of this run when the check did not pass: blocking for
  ``required`` and ``block``, non-blocking for ``advisory`` and ``warn``. A failing blocking one
  fails the plan (the virtual layer is not moved) and names the check in SQLMesh's error.

The measuring query records exactly what the dbt target records (decision 0501: counts as
integers, values cast to text, exact decimal bounds, gaps as exact integers), with the same
descriptors, so the verdict and the sentences come from one place, ``assay.checks.recorded``.
``on_failure: keep`` is refused by validation for this target (decision 0213).
"""

from __future__ import annotations

import json
import re
from typing import Any

import sqlglot
from sqlglot import exp

from ...checks.declared import DeclaredCheck
from ...ir.model import Entity, Project
from .spelling import SqlmeshSpelling

RESULTS_TABLE = "assay_check_results"
NUMERIC_TYPES = ("int",)
GAP_SCALE = {"timestamp": 1_000_000, "date": 1, "numeric": 1}
INDENT = "  "
SQL_POSITION = 1000  # SQL check files sort after the declared checks, as on dbt
THIS = "@this_model"


def results_relation(project: Project) -> str:
    return f"{project.schema('meta')}.{RESULTS_TABLE}"


def is_numeric(assay_type: str) -> bool:
    return assay_type in NUMERIC_TYPES or assay_type.startswith("decimal")


def continuity_domain(assay_type: str):
    if assay_type in ("timestamp", "date"):
        return assay_type
    return "numeric" if is_numeric(assay_type) else None


def _bounds(check: DeclaredCheck) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("max_null_ppm", "min_value", "max_value", "max_gap_seconds", "min_rows", "max_rows"):
        value = getattr(check, name)
        if value is not None:
            out[name] = value
    return out


def _decimal(low: SqlmeshSpelling, bound: str) -> str:
    """A bound as a decimal of exactly its own precision and scale: never a float (0501)."""
    digits = bound.lstrip("-")
    whole, _, frac = digits.partition(".")
    scale = len(frac)
    precision = min(max(len(whole) + scale, scale + 1, 1), 38)
    return low.cast(low.string(bound), f"decimal({precision},{scale})", False)


class _Query:
    """The select items and CTEs of the one measuring query, every output column named."""

    def __init__(self, low: SqlmeshSpelling) -> None:
        self.low = low
        self.base: list[tuple[str, str]] = [("COUNT(*)", "assay_rows")]
        self.ctes: list[str] = []
        self.joins: list[str] = []
        self.outer: list[tuple[str, str]] = []

    def text(self, expr: str) -> str:
        return self.low.cast(expr, "string", False)

    def sql(self) -> str:
        lines = ["WITH assay_t AS (", f"{INDENT}SELECT * FROM {THIS}", "),", "assay_m AS (", f"{INDENT}SELECT"]
        lines.append(",\n".join(f"{INDENT * 2}{e} AS {n}" for e, n in self.base))
        lines += [f"{INDENT}FROM assay_t", ")"]
        for cte in self.ctes:
            lines[-1] += ","
            lines.append(cte)
        items = [f"m.{n} AS {n}" for _e, n in self.base] + [f"{e} AS {n}" for e, n in self.outer]
        lines.append("SELECT")
        lines.append(",\n".join(f"{INDENT}{i}" for i in items))
        lines.append("FROM assay_m AS m")
        lines += self.joins
        return "\n".join(lines)


def _measure(check: DeclaredCheck, n: int, entity: Entity, q: _Query) -> dict[str, Any]:
    """Add one check's measurements to the query; return its descriptor (the dbt target's shape)."""
    low = q.low
    types = [(entity.column(c).type if entity.column(c) is not None else "string") for c in check.columns]
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
    }
    p = f"m{n}_"
    if check.kind == "null_ceiling":
        c = low.qi(check.columns[0])
        q.base.append((f"COUNT(*) - COUNT({c})", f"{p}nulls"))
        desc["counts"]["nulls"] = f"{p}nulls"
    elif check.kind == "value_range":
        c = low.qi(check.columns[0])
        desc["orderable"] = is_numeric(types[0])
        if desc["orderable"]:
            outside = f"{c} < {_decimal(low, check.min_value)} OR {c} > {_decimal(low, check.max_value)}"
            q.base += [
                (f"COUNT({c})", f"{p}values"),
                (f"COALESCE(SUM(CASE WHEN {outside} THEN 1 ELSE 0 END), 0)", f"{p}outside"),
                # The smallest offending value: one deterministic choice (decision 0501).
                (q.text(f"MIN(CASE WHEN {outside} THEN {c} END)"), f"{p}first"),
                (q.text(f"MIN({c})"), f"{p}min"),
                (q.text(f"MAX({c})"), f"{p}max"),
            ]
            desc["counts"].update(values=f"{p}values", outside=f"{p}outside")
            desc["texts"].update(first=f"{p}first", min=f"{p}min", max=f"{p}max")
    elif check.kind == "key_uniqueness":
        cols = [low.qi(c) for c in check.columns]
        keys = [f"{q.text(c)} AS {p}key_{i}" for i, c in enumerate(cols, 1)]
        order = ", ".join(f"{c} NULLS LAST" for c in cols)
        # GROUP BY puts NULL key parts together: a repeated (NULL, 'x') is a repeat (0501).
        q.ctes.append(
            "\n".join(
                [
                    f"assay_k{n} AS (",
                    f"{INDENT}SELECT SUM(assay_n) OVER () AS {p}repeats, " + ", ".join(keys)
                    + f", ROW_NUMBER() OVER (ORDER BY {order}) AS assay_rn",
                    f"{INDENT}FROM (SELECT {', '.join(cols)}, COUNT(*) AS assay_n FROM assay_t "
                    f"GROUP BY {', '.join(cols)} HAVING COUNT(*) > 1) AS assay_g",
                    ")",
                ]
            )
        )
        q.joins.append(f"LEFT JOIN assay_k{n} AS k{n} ON k{n}.assay_rn = 1")
        q.outer.append((f"COALESCE(k{n}.{p}repeats, 0)", f"{p}repeats"))
        q.outer += [(f"k{n}.{p}key_{i}", f"{p}key_{i}") for i in range(1, len(cols) + 1)]
        desc["counts"]["repeats"] = f"{p}repeats"
        desc["texts"]["key"] = [f"{p}key_{i}" for i in range(1, len(cols) + 1)]
    elif check.kind == "continuity":
        c = low.qi(check.columns[0])
        domain = continuity_domain(types[0])
        desc["domain"] = domain
        desc["gap_scale"] = GAP_SCALE.get(domain or "", 1)
        if domain is not None:
            q.base += [(f"COUNT(DISTINCT {c})", f"{p}distinct"), (q.text(f"MIN({c})"), f"{p}only")]
            gap = f"@assay_continuity_gap(assay_lo, assay_hi, {low.string(domain)})"
            # Repeated values collapse first (DISTINCT); the widest gap wins, ties go to the
            # earliest pair, so the endpoints are the same on every engine.
            q.ctes.append(
                "\n".join(
                    [
                        f"assay_c{n} AS (",
                        f"{INDENT}SELECT {p}gap, {q.text('assay_lo')} AS {p}from, {q.text('assay_hi')} AS {p}to,",
                        f"{INDENT * 2}ROW_NUMBER() OVER (ORDER BY {p}gap DESC, assay_lo) AS assay_rn",
                        f"{INDENT}FROM (",
                        f"{INDENT * 2}SELECT assay_lo, assay_hi, {gap} AS {p}gap",
                        f"{INDENT * 2}FROM (SELECT LAG(assay_v) OVER (ORDER BY assay_v) AS assay_lo, assay_v AS assay_hi",
                        f"{INDENT * 3}FROM (SELECT DISTINCT {c} AS assay_v FROM assay_t WHERE {c} IS NOT NULL) AS assay_d) AS assay_p",
                        f"{INDENT * 2}WHERE assay_lo IS NOT NULL",
                        f"{INDENT}) AS assay_w",
                        ")",
                    ]
                )
            )
            q.joins.append(f"LEFT JOIN assay_c{n} AS c{n} ON c{n}.assay_rn = 1")
            q.outer += [
                (f"c{n}.{p}gap", f"{p}gap"),
                (q.text(f"c{n}.{p}gap"), f"{p}gap_text"),
                (f"c{n}.{p}from", f"{p}from"),
                (f"c{n}.{p}to", f"{p}to"),
            ]
            desc["counts"]["distinct"] = f"{p}distinct"
            desc["gap"] = f"{p}gap"
            desc["texts"].update(only=f"{p}only", gap=f"{p}gap_text", **{"from": f"{p}from", "to": f"{p}to"})
    return desc


def declared_query(entity: Entity, low: SqlmeshSpelling) -> tuple[str, list[dict[str, Any]]]:
    """The one measuring query of an entity's declared checks over ``@this_model``, and the
    descriptors naming the columns of its row each check reads."""
    q = _Query(low)
    descriptors = [_measure(check, n, entity, q) for n, check in enumerate(entity.declared_checks, 1)]
    return q.sql(), descriptors


def _sql_against_this(check, schema: str, dialect: str) -> str:
    """The check file's query with its own table replaced by ``@this_model`` (the table SQLMesh
    has just written), keeping the alias it was read under; other tables are read as they are."""
    placeholder = "assay_this_model_placeholder"
    tree = sqlglot.parse_one(check.sql, read="duckdb")
    for table in list(tree.find_all(exp.Table)):
        if table.name == check.table and (not table.db or table.db in (check.namespace, schema)):
            alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(check.table, quoted=True))
            new = exp.to_table(placeholder)
            new.set("alias", alias)
            table.replace(new)
    return tree.sql(dialect=dialect).replace(placeholder, THIS)


def _audit_name(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^a-z0-9_]", "_", name.lower())


def sql_check_audit_name(check) -> str:
    return _audit_name("assay_sql_check__", check.check_name)


def declared_audit_name(check: DeclaredCheck) -> str:
    return _audit_name("assay_check__", check.check_id)


def _sorted_sql_checks(entity: Entity) -> list:
    return sorted(entity.sql_checks, key=lambda c: c.name)


def audit_names(entity: Entity) -> list[str]:
    """The inline audits the model lists, in the order they run: declared, then SQL files."""
    return [declared_audit_name(c) for c in entity.declared_checks] + [sql_check_audit_name(c) for c in _sorted_sql_checks(entity)]


def _indent(sql: str, by: str) -> str:
    return "\n".join(by + line for line in sql.splitlines())


def post_statements(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """The recording post-statements of an entity's model, or none."""
    results = low.string(results_relation(project))
    table = low.string(entity.name)
    out = []
    if entity.declared_checks:
        sql, descriptors = declared_query(entity, low)
        # 000's budgets of the row pass (assay.yml `checks`), applied by the recorder (0214).
        scan_bytes, time_seconds = project.budget_of(entity.name)
        out.append(
            "\n".join(
                [
                    "@assay_record_declared_checks(",
                    f"{INDENT}table_name := {table},",
                    f"{INDENT}results := {results},",
                    f"{INDENT}checks := {low.string(json.dumps(descriptors, sort_keys=True))},",
                    f"{INDENT}scan_budget := {scan_bytes},",
                    f"{INDENT}time_budget := {time_seconds},",
                    f"{INDENT}measure := (",
                    _indent(sql, INDENT * 2),
                    f"{INDENT})",
                    ")",
                ]
            )
        )
    for n, check in enumerate(_sorted_sql_checks(entity), 1):
        sql = _sql_against_this(check, project.schema("silver"), low.dialect)
        out.append(
            "\n".join(
                [
                    "@assay_record_sql_check(",
                    f"{INDENT}table_name := {table},",
                    f"{INDENT}results := {results},",
                    f"{INDENT}check_name := {low.string(check.name)},",
                    f"{INDENT}on_failure := {low.string(check.on_failure)},",
                    f"{INDENT}position := {SQL_POSITION + n},",
                    f"{INDENT}query := (",
                    _indent(sql, INDENT * 2),
                    f"{INDENT})",
                    ")",
                ]
            )
        )
    return out


def _audit(name: str, blocking: bool, dialect: str, body: str) -> str:
    props = [f"name {name}", f"dialect {dialect}", f"blocking {'TRUE' if blocking else 'FALSE'}"]
    return "AUDIT (\n  " + ",\n  ".join(props) + "\n);\n" + f"SELECT * FROM ({body}) AS assay_violations"


def inline_audits(entity: Entity, project: Project, low: SqlmeshSpelling) -> list[str]:
    """One AUDIT block per check, reading its recorded result of this run."""
    results = low.string(results_relation(project))
    table = low.string(entity.name)
    out = []
    for c in entity.declared_checks:
        body = f"@assay_check_failures({results}, {table}, {low.string(c.check_id)})"
        out.append(_audit(declared_audit_name(c), c.enforcement == "required", low.dialect, body))
    for c in _sorted_sql_checks(entity):
        body = f"@assay_check_failures({results}, {table}, {low.string(c.name)}, {low.string(c.on_failure)})"
        out.append(_audit(sql_check_audit_name(c), c.on_failure == "block", low.dialect, body))
    return out


def model_tail(entity: Entity, project: Project, low: SqlmeshSpelling) -> str:
    """What follows the model's query: the recording post-statements and the inline audits."""
    parts = post_statements(entity, project, low) + inline_audits(entity, project, low)
    return ";\n\n".join(parts) + (";\n" if parts else "")
