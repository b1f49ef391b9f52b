"""`assay plan`: the differences of table checks (decision 1128).

Declared checks (document 000, and the rate, change and anomaly thresholds lowered into them), SQL
check files (002), the coverage and reconcile tests and the checks of tables assay only reads move
no row between the entity and the reject table: they decide whether the next build publishes a
table (a blocking check), keeps it (a `keep` file) or only records a result. So every difference of
them is one CHECKS change, never in replay_scope or backfill_scope, whose detail says what changed
and what it means for the next build; whether the data as it is now passes is what `assay plan
--data` runs the build for. A change of a check's description alone is NON_BREAKING.

Pure: tuples (entity, kind, detail, classification) out; `assay.plan` makes them Changes.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Iterable, Optional

CHECKS = "CHECKS"
NON_BREAKING = "NON_BREAKING"
SEE = "run with --data to see"

#: A declared check's parameters and which way is tighter: "down" (a lower value fails more
#: rows or runs), "up" (a higher value does), None (neither: the check reads something else).
#: A bound that is absent is no bound: for "down" the loosest, for "up" too.
PARAMS = (
    ("kind", None), ("columns", None), ("max_null_ppm", "down"), ("min_value", "up"), ("max_value", "down"),
    ("max_gap_seconds", "down"), ("min_rows", "up"), ("max_rows", "down"), ("max_rate", "down"), ("rule", None),
    ("factor", "down"), ("floor", "down"), ("metric", None), ("min_history", None),
)


def _num(value) -> Optional[Decimal]:
    try:
        return Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None


def _way(direction: Optional[str], old, new) -> str:
    """'tightened', 'relaxed' or 'changed' for one parameter that differs."""
    if direction is None:
        return "changed"
    if old is None:  # a bound appears
        return "tightened"
    if new is None:  # a bound goes
        return "relaxed"
    o, n = _num(old), _num(new)
    if o is None or n is None:
        return "changed"
    lower = n < o
    return "tightened" if lower == (direction == "down") else "relaxed"


def _show(value) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, tuple):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _overall(ways: list[str]) -> str:
    return ways[0] if len(set(ways)) == 1 else "changed"


class _Where:
    """What a check's outcome does to its table: an entity's build, or a table assay only reads (its
    check task stops the models that read it, decision 0520)."""

    def __init__(self, table: str, built: bool):
        self.table, self.built = table, built

    def blocks(self) -> str:
        if self.built:
            return f"the next build publishes {self.table} only if it passes: {SEE}"
        return f"a failure in the next build stops the models that read {self.table}"

    def keeps(self) -> str:
        return f"a failure publishes {self.table} and keeps it, its readers refused until it passes: {SEE}"

    def records(self) -> str:
        return "recorded only, it never stops publication"

    def unblocks(self) -> str:
        return f"no longer stops {'publication of ' + self.table if self.built else 'the readers of ' + self.table}"

    def relaxed(self) -> str:
        if self.built:
            return f"a build it stopped may now publish {self.table}: {SEE}"
        return f"a build it stopped may now build the readers of {self.table}"


def _effect(where: _Where, how: str) -> str:
    """What a check that now has `how` (block, keep, or record) means for the next build."""
    return {"block": where.blocks, "keep": where.keeps}.get(how, where.records)()


def _declared_how(check) -> str:
    return "block" if check.enforcement == "required" else "record"


def _sql_how(check) -> str:
    return {"block": "block", "keep": "keep"}.get(check.on_failure, "record")


def _declared(where: _Where, old: Iterable, new: Iterable) -> list[tuple]:
    out = []
    olds = {c.check_id: c for c in old}
    news = {c.check_id: c for c in new}
    for cid in sorted(set(news) - set(olds)):
        c = news[cid]
        out.append((where.table, "check_added", f"{cid} ({c.kind}, {c.enforcement}): {_effect(where, _declared_how(c))}", CHECKS))
    for cid in sorted(set(olds) - set(news)):
        c = olds[cid]
        effect = where.unblocks() if c.enforcement == "required" else "its result is no longer recorded"
        out.append((where.table, "check_removed", f"{cid} ({c.kind}, {c.enforcement}): {effect}", CHECKS))
    for cid in sorted(set(olds) & set(news)):
        o, n = olds[cid], news[cid]
        if o.enforcement != n.enforcement:
            effect = _effect(where, _declared_how(n)) if n.enforcement == "required" else where.unblocks()
            out.append((where.table, "enforcement_changed", f"{cid}: {o.enforcement} -> {n.enforcement}: {effect}", CHECKS))
        diffs = [(name, d, getattr(o, name, None), getattr(n, name, None)) for name, d in PARAMS
                 if getattr(o, name, None) != getattr(n, name, None)]
        if diffs:
            ways = [_way(d, a, b) for _n, d, a, b in diffs]
            way = _overall(ways)
            said = ", ".join(f"{name} {_show(a)} -> {_show(b)}" for name, _d, a, b in diffs)
            if _declared_how(n) == "record":
                effect = where.records()
            elif way == "relaxed":
                effect = where.relaxed()
            else:
                effect = (f"it may stop {where.table} from being published in the next build: {SEE}" if where.built
                          else where.blocks())
            out.append((where.table, "check_changed", f"{cid} ({n.kind}, {n.enforcement}): {said}, {way}; {effect}", CHECKS))
        if o.description != n.description and not diffs and o.enforcement == n.enforcement:
            out.append((where.table, "check_description_changed", cid, NON_BREAKING))
    return out


def _sql(where_of, old: Iterable, new: Iterable) -> list[tuple]:
    out = []
    olds = {c.name: c for c in old}
    news = {c.name: c for c in new}
    for name in sorted(set(news) - set(olds)):
        c = news[name]
        where = where_of(c)
        out.append((where.table, "sql_check_added", f"{name} ({c.on_failure}): {_effect(where, _sql_how(c))}", CHECKS))
    for name in sorted(set(olds) - set(news)):
        c = olds[name]
        where = where_of(c)
        effect = {"block": where.unblocks(), "keep": f"no longer keeps {where.table}"}.get(
            c.on_failure, "its result is no longer recorded")
        out.append((where.table, "sql_check_removed", f"{name} ({c.on_failure}): {effect}", CHECKS))
    for name in sorted(set(olds) & set(news)):
        o, n = olds[name], news[name]
        where = where_of(n)
        if o.on_failure != n.on_failure:
            effect = where.unblocks() if o.on_failure == "block" and n.on_failure != "block" and n.on_failure != "keep" \
                else _effect(where, _sql_how(n))
            if o.on_failure == "block" and n.on_failure == "keep":
                effect = f"a failure no longer sets {where.table} back; " + where.keeps()
            out.append((where.table, "on_failure_changed", f"{name}: {o.on_failure} -> {n.on_failure}: {effect}", CHECKS))
        if " ".join(o.sql.split()) != " ".join(n.sql.split()):
            out.append((where.table, "sql_check_changed", f"{name} ({n.on_failure}): its query changed; "
                        f"{_effect(where, _sql_how(n)) if _sql_how(n) != 'record' else where.records()}", CHECKS))
        elif o.description != n.description and o.on_failure == n.on_failure:
            out.append((where.table, "check_description_changed", name, NON_BREAKING))
    return out


def check_changes(entity: str, old_declared, new_declared, old_sql, new_sql) -> list[tuple]:
    """The check differences of one entity in both specs."""
    where = _Where(entity, True)
    return _declared(where, old_declared, new_declared) + _sql(lambda _c: where, old_sql, new_sql)


def _cross(kind: str, table_of, fields: tuple[str, ...], tighter: dict, old: Iterable, new: Iterable) -> list[tuple]:
    """Coverage (`kind` coverage) or reconcile tests: `on_fail: fail` blocks the build's run, `flag` warns."""
    out = []
    olds = {c.name: c for c in old}
    news = {c.name: c for c in new}

    def effect(c) -> str:
        if c.on_fail == "fail":
            return f"a failure fails the next build (dbt test, severity error): {SEE}"
        return "a failure only warns"

    for name in sorted(set(news) - set(olds)):
        c = news[name]
        out.append((table_of(c), f"{kind}_added", f"{name} (on_fail: {c.on_fail}): {effect(c)}", CHECKS))
    for name in sorted(set(olds) - set(news)):
        c = olds[name]
        out.append((table_of(c), f"{kind}_removed", f"{name} (on_fail: {c.on_fail}): "
                    + ("no longer fails a build" if c.on_fail == "fail" else "no longer warns"), CHECKS))
    for name in sorted(set(olds) & set(news)):
        o, n = olds[name], news[name]
        diffs = [(f, getattr(o, f), getattr(n, f)) for f in fields if getattr(o, f) != getattr(n, f)]
        if not diffs:
            continue
        ways = [_way(tighter.get(f), a, b) if f != "on_fail" else
                ("tightened" if b == "fail" else "relaxed") for f, a, b in diffs]
        said = ", ".join(f"{f} {_show(a)} -> {_show(b)}" for f, a, b in diffs
                         if f not in ("left", "right")) or "its sides changed"
        if any(f in ("left", "right") for f, _a, _b in diffs) and said != "its sides changed":
            said += ", its sides changed"
        way = _overall(ways)
        out.append((table_of(n), f"{kind}_changed", f"{name}: {said}, {way}; {effect(n)}", CHECKS))
    return out


def project_check_changes(old, new) -> list[tuple]:
    """The check differences outside the entities' own: coverage and reconcile tests, and the
    checks of tables assay only reads (declared checks of `tables_version` documents and their SQL
    check files)."""
    out = []
    out += _cross("coverage", lambda c: c.parent, ("child", "columns", "min", "on_fail"), {"min": "up"},
                  old.coverage, new.coverage)
    out += _cross("reconcile", lambda c: c.left.entity, ("left", "right", "tolerance", "on_fail"),
                  {"tolerance": "down"}, old.reconcile, new.reconcile)
    old_tables = {t.name: t for t in old.tables}
    new_tables = {t.name: t for t in new.tables}
    for name in sorted(set(old_tables) | set(new_tables)):
        o, n = old_tables.get(name), new_tables.get(name)
        out += _declared(_Where(name, False), o.declared_checks if o else (), n.declared_checks if n else ())
    out += _sql(lambda c: _Where(c.qualified_table, False), old.sql_checks, new.sql_checks)
    return out
