"""Referential rules for the oracle, written from reference 001 alone.

What 001 and pipeline.md say, and all this module models:

- A `referential` rule judges a child row against its parent's **admitted** rows of the same
  build and nothing else: the probe never reads a reject table, so a parent that is
  quarantined, late or not yet replayed counts as absent. A parent row superseded by a later
  delivery (0014) or deduped away is not admitted either.
- It fires only when it is definitively true: every foreign-key column is non-NULL and no
  admitted parent row has that key. A NULL foreign key is not an orphan.
- `on_missing: quarantine` diverts the orphan, `flag` keeps it flagged (their dispositions come
  from the oracle's own reading of the spec). `unknown_member` (rewrite the key to
  `'__unknown__'`) is not modelled and refused at construction, as are type-2 parents and
  relationships that form a cycle (no parent-first order).
- Like every rule, it runs on the rows that survive dedupe (rank 1 among latest deliveries).

Replay needs nothing here: `Warehouse.replay` already says what `assay replay` must re-deliver,
and the next build judges the re-delivered rows like any other delivery.

The hook is a subclass, so the rest of the oracle is unchanged: `ReferentialOracle` judges
entities parents first, remembers each entity's admitted keys, and answers `referential` in
`_fires`; everything else is `judge.Oracle`'s. `Warehouse` here is `ledger.Warehouse` judging
with it (`from tests.support.oracle.referential import Warehouse`). Nothing is imported from
`assay`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Mapping, Optional

from .judge import Build, Oracle, as_spec
from .ledger import Warehouse as _Warehouse
from .spec import _documents, _read_settings
from .values import Unsupported

__all__ = ["Relationship", "read_relationships", "ReferentialOracle", "Warehouse"]


@dataclass(frozen=True)
class Relationship:
    name: str
    child: str  # `from:`
    parent: str  # `to:`
    columns: tuple  # ((child column, parent column), ...) from `via:`


def read_relationships(root) -> dict:
    """name -> Relationship, read from the spec documents' `relationships:` lists."""
    specs, _schemas = _read_settings(Path(root))
    out = {}
    for _rel, doc in _documents(specs):
        if "spec_version" not in doc:
            continue
        for r in doc.get("relationships") or []:
            via = r.get("via") or {}
            out[r["name"]] = Relationship(r["name"], r["from"], r["to"], tuple((str(c), str(p)) for c, p in via.items()))
    return out


class ReferentialOracle(Oracle):
    """The oracle, with `referential` rules judged against the parent's admitted rows of the build."""

    def __init__(self, spec):
        full = as_spec(spec)
        self.relationships = read_relationships(full.root)
        self._via: dict = {}  # (entity, rule name) -> Relationship
        edges: dict = {e.name: set() for e in full.entities}
        for e in full.entities:
            for rule in e.rules:
                if rule.kind != "referential":
                    continue
                rel = self.relationships.get(rule.param("via"))
                if rel is None:
                    raise Unsupported(f"refused spec: {rule.name} reads an undeclared relationship {rule.param('via')!r}")
                if rel.child != e.name:
                    raise Unsupported(f"refused spec: {rule.name} on {e.name} reads {rel.name}, which starts at {rel.child}")
                if rule.param("on_missing") == "unknown_member":
                    raise Unsupported(f"{rule.name}: on_missing unknown_member (the '__unknown__' rewrite)")
                parent = full.entity(rel.parent)
                if parent.scd != "type1":
                    raise Unsupported(f"{rule.name}: a {parent.scd} parent (current versions only)")
                if sorted(p for _c, p in rel.columns) != sorted(parent.key):
                    raise Unsupported(f"{rule.name}: `via` must join on the parent's whole key")
                self._via[(e.name, rule.name)] = rel
                edges[e.name].add(rel.parent)
        self.order = _parents_first(edges)
        # The oracle refuses rule kinds it does not know: hand it the spec without them, then
        # judge with the whole spec (the referential rules are answered in `_fires` below).
        stripped = replace(full, entities=tuple(
            replace(e, rules=tuple(r for r in e.rules if r.kind != "referential")) for e in full.entities))
        super().__init__(stripped)
        self.spec = full
        self._admitted: dict = {}

    def build(self, bronze: Mapping[str, Iterable[Mapping[str, Optional[str]]]]) -> Build:
        bronze = {name: [dict(r) for r in rows] for name, rows in bronze.items()}
        judged: dict = {}
        self._admitted = {}
        for name in self.order:
            e = self.spec.entity(name)
            j = self._judge(e, bronze)
            judged[name] = j
            self._admitted[name] = {tuple(r.values[k] for k in e.key) for r in j.kept}
        return Build({e.name: judged[e.name] for e in self.spec.entities})

    def _fires(self, e, rule, mapping, values, markers, counts) -> bool:
        if rule.kind != "referential":
            return super()._fires(e, rule, mapping, values, markers, counts)
        rel = self._via[(e.name, rule.name)]
        parent = self.spec.entity(rel.parent)
        by_parent_column = {p: values.get(c) for c, p in rel.columns}
        key = tuple(by_parent_column[k] for k in parent.key)
        if any(v is None for v in key):
            return False  # a NULL foreign key is not an orphan
        return key not in self._admitted[rel.parent]


def _parents_first(edges: dict) -> list:
    """Entity names, every parent before its children, ties by name; a cycle is refused."""
    order: list = []
    done: set = set()
    visiting: set = set()

    def visit(name: str) -> None:
        if name in done:
            return
        if name in visiting:
            raise Unsupported(f"relationships form a cycle through {name}")
        visiting.add(name)
        for parent in sorted(edges[name]):
            if parent != name:
                visit(parent)
            else:
                raise Unsupported(f"{name} refers to itself")
        visiting.discard(name)
        done.add(name)
        order.append(name)

    for name in sorted(edges):
        visit(name)
    return order


class Warehouse(_Warehouse):
    """The oracle's `Warehouse` (ledger, respec, replay), judging with `ReferentialOracle`."""

    def __init__(self, spec):
        super().__init__(_without_referential(spec))
        self.oracle = ReferentialOracle(spec)

    def respec(self, spec) -> None:
        self.oracle = ReferentialOracle(spec)


def _without_referential(spec):
    full = as_spec(spec)
    return replace(full, entities=tuple(
        replace(e, rules=tuple(r for r in e.rules if r.kind != "referential")) for e in full.entities))
