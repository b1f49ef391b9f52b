"""What a build left, read from the relations it wrote, and what changed between two of them.

Only counts leave this module: rule names, routes and reject ids are read to compare, never a
value of a row (docs/privacy.md). The readers take the operator core's `Reader`; the comparison
(`entity_impact`) is pure, over two `Snapshot`s.

A row of the staged relation is known across builds by its source row, `(_mapping,
_source_row_id)`, and only its latest delivery (`_delivery_rank = 1`) is compared: an earlier
delivery is superseded and judged by no rule (decision 0014).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from ..ir.model import Entity, Project
from ..lower.mart import mart_rules
from ..lower.staged import REPLAY_LOAD_ID

ROUTES = ("kept", "quarantined", "failed", "deduped")
# The reporting name of each route a rule's failing rows can take (a kept failing row is flagged).
ROUTE_WORD = {"kept": "flagged", "quarantined": "quarantined", "failed": "failed"}


@dataclass(frozen=True)
class Snapshot:
    """One entity as a build left it: its staged judgement and its reject table."""

    staged: dict = field(default_factory=dict)  # (mapping, source_row_id) -> (route, frozenset(rules)), latest deliveries
    routes: dict = field(default_factory=dict)  # route -> rows of the staged relation, every delivery
    open_rejects: frozenset = frozenset()  # reject ids with resolved_at NULL
    open_rules: dict = field(default_factory=dict)  # (mapping, source_row_id) -> frozenset(rules), open reject rows
    resolved: dict = field(default_factory=dict)  # reject id -> resolution, for resolved rows
    built: bool = False  # whether the staged relation exists


def rules_of(value: Any) -> frozenset:
    """A `_failed_rules` / `failed_rules` value as a set of names: an array where the engine has
    one, a comma-delimited string otherwise (reference 001)."""
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset(p for p in value.split(",") if p)
    return frozenset(str(v) for v in value)


def read_snapshot(reader, project: Project, entity: Entity) -> Snapshot:
    """The entity's staged relation and reject table as the last build left them (empty if never built)."""
    silver = project.schema("silver")
    if not reader.exists(silver, f"{entity.name}__staged"):
        return Snapshot()
    staged_rel = reader.relation(silver, f"{entity.name}__staged")
    staged, routes = {}, Counter()
    for mapping, srid, rank, route, rules in reader.query(
            f"select _mapping, _source_row_id, _delivery_rank, _route, _failed_rules from {staged_rel}"):
        routes[route] += 1
        if rank == 1:
            staged[(mapping, srid)] = (route, rules_of(rules))
    open_rejects, open_rules, resolved = set(), {}, {}
    if entity.has_reject and reader.exists(silver, f"{entity.name}__reject"):
        reject = reader.relation(silver, f"{entity.name}__reject")
        for rid, mapping, srid, rules, resolved_at, resolution in reader.query(
                f"select reject_id, mapping, _source_row_id, failed_rules, resolved_at, resolution from {reject}"):
            if resolved_at is None:
                open_rejects.add(rid)
                open_rules[(mapping, srid)] = rules_of(rules)
            else:
                resolved[rid] = resolution
    return Snapshot(staged, dict(routes), frozenset(open_rejects), open_rules, resolved, True)


def replayed_routes(reader, project: Project, entity: Entity) -> dict:
    """route -> rows of the staged relation delivered by replay (`_load_id = '__replay__'`), latest deliveries."""
    silver = project.schema("silver")
    if not reader.exists(silver, f"{entity.name}__staged"):
        return {}
    rel = reader.relation(silver, f"{entity.name}__staged")
    rows = reader.query(f"select _route, count(*) from {rel} where _load_id = ? and _delivery_rank = 1 group by _route",
                        (REPLAY_LOAD_ID,))
    return {route: int(n) for route, n in rows}


@dataclass
class RuleImpact:
    """One rule's failing rows after the next build, by route, and how many of them are new."""

    disposition: str
    after: dict = field(default_factory=dict)  # flagged | quarantined | failed -> rows
    # the same, counting only rows that did not take that route for this rule before: for `quarantined`
    # the reject table's open rows say so (a build a fail rule stopped left staged routes no build
    # published, and its diversions never reached the reject table), for the others the last staged
    # routes
    new: dict = field(default_factory=dict)

    def as_dict(self, published: Optional[bool] = True) -> dict:
        """Counts by route; on an entity the build does not publish only `failed` is a fact (the
        build stops there and nothing is flagged or quarantined), so the others are None."""
        out = {"disposition": self.disposition}
        for word in ("flagged", "quarantined", "failed"):
            applied = word == "failed" or published is not False
            out[word] = self.after.get(word, 0) if applied else None
            out[f"newly_{word}"] = self.new.get(word, 0) if applied else None
        return out


@dataclass
class EntityImpact:
    """What the next build does to one entity, against what the last build left."""

    entity: str
    routes: dict  # route -> rows of the next build's staged relation (every delivery)
    newly_quarantined: int  # reject rows open after the build that were not open before
    leave_reject: dict  # resolution -> open reject rows the build resolves
    rules: dict  # rule name -> RuleImpact
    published: Optional[bool] = None  # whether the build published the entity (None: not known)
    kept: bool = False  # published, then kept by a failing keep check (dbt; docs/checks.md, "keep")
    replay: Optional[dict] = None
    # False when no table holds the next build's rows (a SQLMesh plan a blocking audit failed applies
    # nothing): then only `stops`, the audits that failed on it (model, audit, rule or None, rows)
    measured: bool = True
    stops: tuple = ()
    # dbt: what stopped or kept it, as the build said it (a check and its sentence, a failing test)
    failures: tuple = ()

    def as_dict(self) -> dict:
        if not self.measured:
            return {"measured": False, "published": self.published, "kept": self.kept,
                    "stops": [{"model": m, "audit": a, "rule": r, "rows": n} for m, a, r, n in self.stops],
                    **({"replay": self.replay} if self.replay is not None else {})}
        out = {
            "routes": {r: self.routes.get(r, 0) for r in ROUTES},
            "newly_quarantined": self.newly_quarantined,
            "leave_reject": {k: self.leave_reject.get(k, 0) for k in ("admitted", "deduped")},
            "rules": {name: r.as_dict(self.published) for name, r in sorted(self.rules.items())},
            "published": self.published,
            "kept": self.kept,
            "failures": list(self.failures),
        }
        if self.replay is not None:
            out["replay"] = self.replay
        return out


def entity_impact(entity: Entity, before: Snapshot, after: Snapshot) -> EntityImpact:
    """Compare the last build's snapshot of `entity` with the next build's (pure)."""
    # the mart's rule rows: the entity's rules, and an incremental entity's late arrivals (decision 1131)
    rules = {name: RuleImpact(disposition) for _mapping, name, disposition in mart_rules(entity)}
    for row, (route, failed) in after.staged.items():
        word = ROUTE_WORD.get(route)
        if word is None:
            continue
        for name in failed & set(rules):
            impact = rules[name]
            impact.after[word] = impact.after.get(word, 0) + 1
            if word == "quarantined":
                # newly quarantined: an open reject row of the rule after the build that was not open
                # before, as `newly_quarantined` counts them (a quarantined ledger row whose reject
                # row retention deleted is not written again: an outside tester, session 49)
                new = (name in after.open_rules.get(row, frozenset())
                       and name not in before.open_rules.get(row, frozenset()))
            else:
                old_route, old_failed = before.staged.get(row, (None, frozenset()))
                new = not (old_route == route and name in old_failed)
            if new:
                impact.new[word] = impact.new.get(word, 0) + 1
    leaving = Counter(after.resolved[rid] for rid in before.open_rejects if rid in after.resolved)
    return EntityImpact(
        entity=entity.name,
        routes=dict(after.routes),
        newly_quarantined=len(after.open_rejects - before.open_rejects),
        leave_reject=dict(leaving),
        rules=rules,
    )
