"""Refusals about relationships, coverage and reconcile checks."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from ..spec.standins import key_unread
from .context import Context, did_you_mean
from .dispositions import disposition_problem
from .types import is_numeric, normalize_type

AGG_SIDE = re.compile(r"^\s*(avg|count|max|min|sum)\s*\(\s*([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\s*\)\s+by\s+(.+?)\s*$", re.I)
KEYED_SIDE = re.compile(r"^\s*([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)\s*$")


def parse_side(text: str):
    """(agg, entity, column, by columns) or None."""
    m = AGG_SIDE.match(text)
    if m:
        by = tuple(c.strip() for c in m.group(4).split(","))
        return m.group(1).lower(), m.group(2), m.group(3), by
    m = KEYED_SIDE.match(text)
    if m:
        return None, m.group(1), m.group(2), ()
    return None


def check_relations(ctx: Context) -> None:
    for file, doc in ctx.docs:
        for rel in doc.relationships:
            _check_relationship(ctx, file, rel)
        for cov in doc.coverage:
            what = f"coverage check `{cov.name}`"
            if cov.relationship not in ctx.relationships and cov.relationship not in ctx.loaded.known_relationships:
                ctx.report(file, cov.line("relationship"), f"{what} names relationship `{cov.relationship}`, which is not declared.{did_you_mean(cov.relationship, ctx.relationships)} Declare it under `relationships:` or name one that is.")
            p = disposition_problem(cov.on_fail, what, ("flag", "fail"))
            if p:
                ctx.report(file, cov.line("on_fail") if cov.on_fail else cov.line(), p)
        for rec in doc.reconcile:
            _check_reconcile(ctx, file, rec)


def _check_relationship(ctx: Context, file: str, rel) -> None:
    what = f"relationship `{rel.name}`"
    src, dst = ctx.entity(rel.from_), ctx.entity(rel.to)
    for side, name, ent in (("from", rel.from_, src), ("to", rel.to, dst)):
        if ent is None and name not in ctx.loaded.known_entities:
            ctx.report(file, rel.line(side), f"{what} {side} `{name}`, which is not a declared entity.{did_you_mean(name, ctx.entities, listed=True)}")
    if src is None or dst is None:
        return
    for fcol, tcol in rel.via.items():
        if fcol not in src.fields:
            ctx.report(file, rel.line("via"), f"{what} joins on `{rel.from_}.{fcol}`, which `{rel.from_}` does not declare.{did_you_mean(fcol, src.fields)}")
        if tcol not in dst.fields:
            ctx.report(file, rel.line("via"), f"{what} joins on `{rel.to}.{tcol}`, which `{rel.to}` does not declare.{did_you_mean(tcol, dst.fields)}")
    if rel.cardinality in ("many_to_one", "one_to_one") and not key_unread(dst.key) and sorted(rel.via.values()) != sorted(dst.key):
        ctx.report(
            file,
            rel.line("via"),
            f"{what} is {rel.cardinality} and joins `{rel.to}` on ({', '.join(rel.via.values())}), which is not its key ({', '.join(dst.key)}); a parent probe must hit at most one row. Join on the parent's key.",
        )
        return  # the types of columns that are the wrong ones to join would be an echo
    for fcol, tcol in rel.via.items():
        ftype, ttype = _join_family(src.fields.get(fcol)), _join_family(dst.fields.get(tcol))
        if ftype is not None and ttype is not None and ftype != ttype:
            # PostgreSQL has no `bigint = text`, DuckDB casts the text and fails on the first
            # key that is not a number: a join is only written between one family of types.
            ctx.report(
                file,
                rel.line("via"),
                f"{what} joins `{rel.from_}.{fcol}` ({normalize_type(src.fields[fcol].type)}) to `{rel.to}.{tcol}` ({normalize_type(dst.fields[tcol].type)}); a join compares values of one type, so declare both columns with the same type.",
            )


def _join_family(fld):
    """The family of types a join column compares within (numbers with numbers), or None when the
    field is missing or its type does not parse (both reported where they are written)."""
    t = normalize_type(fld.type) if fld is not None else None
    return "number" if t is not None and is_numeric(t) else t


def referential_cycles(ctx: Context, _declared: dict, _sql: list):
    """(file, line, subject) of each cycle of referential rules, once per cycle, at the rule of
    its first entity by name. A spec may hold one (reference 001 orders a replay scope through
    it, `assay plan`); a build cannot, since a child's staged model reads its parent's published
    table: the rules are the edges of the build order (dbt: `Found a cycle`), so each target
    refuses it (validate/targets.py, decision 0954). A rule to the entity itself is refused on
    its own (decision 0008)."""
    edges: dict[str, list] = {}  # entity -> [(parent, relationship, file, line)]
    for name, (file, ent) in sorted(ctx.entities.items()):
        for rule in ent.quality:
            found = ctx.relationships.get(getattr(rule, "via", None)) if rule.rule == "referential" else None
            if found and found[1].from_ == name and found[1].to != name and found[1].to in ctx.entities:
                edges.setdefault(name, []).append((found[1].to, rule.via, file, rule.line("via")))
    reported: set = set()
    for start in sorted(edges):
        path = _cycle_from(start, edges)
        if path is None or frozenset(step[0] for step in path) in reported:
            continue
        reported.add(frozenset(step[0] for step in path))
        steps = ", ".join(f"`{child}` reads `{parent}` (via `{via}`, {file}:{line})" for child, (parent, via, file, line) in path)
        yield path[0][1][2], path[0][1][3], f"the cycle of referential rules {steps}"


def _cycle_from(start: str, edges: dict):
    """The shortest cycle through `start` as [(child, edge)], following edges in sorted order, or None."""
    frontier = [[(start, e)] for e in sorted(edges.get(start, []))]
    seen = {start}
    while frontier:
        nxt = []
        for path in frontier:
            parent = path[-1][1][0]
            if parent == start:
                return path
            if parent in seen:
                continue
            seen.add(parent)
            nxt.extend(path + [(parent, e)] for e in sorted(edges.get(parent, [])))
        frontier = nxt
    return None


def _check_reconcile(ctx: Context, file: str, rec) -> None:
    what = f"reconcile check `{rec.name}`"
    p = disposition_problem(rec.on_fail, what, ("flag", "fail"))
    if p:
        ctx.report(file, rec.line("on_fail") if rec.on_fail else rec.line(), p)
    try:
        tol = Decimal(str(rec.tolerance))
        if not tol.is_finite() or tol < 0 or not isinstance(rec.tolerance, str):
            raise InvalidOperation
    except (InvalidOperation, ValueError):
        ctx.report(file, rec.line("tolerance"), f"`tolerance` of {what} is `{rec.tolerance}`; write a non-negative decimal in quotes such as `'0.01'`, so it stays exact.")
    sides = []
    for key in ("left", "right"):
        text = getattr(rec, key)
        parsed = parse_side(text)
        ctx.keep(rec, key, parsed)
        if parsed is None:
            ctx.report(file, rec.line(key), f"`{key}` of {what} is `{text}`; write `<agg>(<entity>.<column>) by <column>[, <column>]` with agg one of avg, count, max, min, sum, or `<entity>.<column>`.")
            continue
        agg, ent_name, col, by = parsed
        ent = ctx.entity(ent_name)
        if ent is None and ent_name in ctx.loaded.known_entities:
            continue  # declared, with its own grammar problems already reported
        if ent is None:
            ctx.report(file, rec.line(key), f"`{key}` of {what} reads entity `{ent_name}`, which is not declared.{did_you_mean(ent_name, ctx.entities)}")
            continue
        for c in (col, *by):
            if c not in ent.fields:
                ctx.report(file, rec.line(key), f"`{key}` of {what} reads `{ent_name}.{c}`, which `{ent_name}` does not declare.{did_you_mean(c, ent.fields)}")
        sides.append((key, agg, ent, by or tuple(ent.key)))
    if len(sides) == 2 and len(sides[0][3]) != len(sides[1][3]):
        shown = [f"`{key}` by ({', '.join(by)})" for key, _agg, _ent, by in sides]
        ctx.report(
            file,
            rec.line("right"),
            f"the two sides of {what} are keyed differently, {shown[0]} and {shown[1]} (a keyed side is keyed by its entity's key); rows are compared group by group, so write `by` columns that match the other side's key one for one.",
        )
