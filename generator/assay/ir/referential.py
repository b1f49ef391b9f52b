"""The entities' referential graph: which child entities read which parent (a referential rule).

One definition for every reader of it: `assay plan` (replay scope and order) and the readers that
say which entities a stopped build skipped (runtime/history_behind.py).
"""

from __future__ import annotations

from typing import Iterable, Optional

from .model import Project

#: Every `on_missing` a referential rule may have (docs/spec.md).
ON_MISSING = ("quarantine", "unknown_member", "flag")


def referential_edges(project: Project, dispositions: Optional[Iterable[str]] = None) -> dict[str, set[str]]:
    """parent -> the children whose referential rule (with one of `dispositions`, default any)
    reads it."""
    wanted = set(ON_MISSING if dispositions is None else dispositions)
    edges: dict[str, set[str]] = {}
    for e in project.entities:
        for r in e.rules_of_kind("referential"):
            if r.param("on_missing") in wanted:
                edges.setdefault(r.param("parent"), set()).add(e.name)
    return edges


def reach(start: set[str], edges: dict[str, set[str]]) -> set[str]:
    """`start` and every entity below it through `edges`, at any distance."""
    seen = set(start)
    frontier = sorted(start)
    while frontier:
        nxt = []
        for parent in frontier:
            for child in sorted(edges.get(parent, ())):
                if child not in seen:
                    seen.add(child)
                    nxt.append(child)
        frontier = nxt
    return seen
