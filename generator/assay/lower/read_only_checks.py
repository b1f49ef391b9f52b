"""The measuring query of a table assay only reads, decided for every column type it may have.

A table declared in a tables document (``tables_version: 1``) has no declared column types, so its
measuring query cannot be fixed when the project is generated: a ``value_range`` check measures
only an orderable column, and a ``continuity`` check's gap depends on the column's domain. So each
check is measured here once per runtime type class (:data:`RUNTIME_TYPES`, what the packages map
an engine column to), and the classes whose SQL is the same are grouped. A target spells the
choice among the groups as it can (dbt: Jinja branches on the type its package reads from the
relation, decision 0522); it decides nothing about what each branch measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Optional

from ..checks.declared import DeclaredCheck
from ..privacy import PII
from .declared_checks import MeasuringQuery, failing_rows_query, measure_check
from .spelling import Spelling

#: The types a package maps an engine column to; every group below is a set of these.
RUNTIME_TYPES = ("int", "decimal", "timestamp", "date", "bool", "string")


class _Typed:
    """What the measuring functions read of an entity, for a table whose column types are the
    ones given (a column not given reads as text)."""

    def __init__(self, types: Optional[dict[str, str]] = None, hidden: frozenset = frozenset()):
        self.name = ""
        self.sql_checks = ()
        # A read-only table's columns are not classified, but a bronze column a `pii` field is read
        # from, or one an entity redacts, is measured as the marker (privacy.py; an outside tester
        # saw them in the measures of a bronze table's checks, session 42).
        self.columns = tuple(SimpleNamespace(name=c, type=(types or {}).get(c, "string"), classification=PII)
                             for c in sorted(hidden))
        self._types = types or {}

    def column(self, name: str):
        return SimpleNamespace(name=name, type=self._types.get(name, "string"))


@dataclass
class Variant:
    """The runtime types one measuring of a check serves, the query parts it adds, and its
    descriptor (with ``rows_sql``: the query of the rows a failing check found, or None)."""

    types: list[str]
    query: MeasuringQuery
    descriptor: dict[str, Any]


def measuring_variants(check: DeclaredCheck, n: int, sp: Spelling, relation: str,
                       hidden: frozenset = frozenset()) -> list[Variant]:
    """The measuring of check number ``n`` over ``relation`` for each runtime type class of its
    first column, classes with the same SQL and descriptor grouped, in :data:`RUNTIME_TYPES`
    order. A check with no column, or whose SQL does not depend on the type, has one variant.
    The values of the columns in ``hidden`` are measured as the marker (privacy.py)."""
    variants: list[Variant] = []
    column = check.columns[0] if check.columns else None
    for t in RUNTIME_TYPES if column else ("string",):
        q = MeasuringQuery(sp, relation)
        typed = _Typed({column: t} if column else {}, hidden)
        desc = measure_check(check, n, typed, q)
        desc = {**desc, "types": None, "rows_sql": failing_rows_query(check, typed, sp, relation)}
        same = next((v for v in variants if (v.query.base, v.query.ctes, v.query.joins, v.query.outer, v.descriptor)
                     == (q.base, q.ctes, q.joins, q.outer, desc)), None)
        if same is None:
            variants.append(Variant([t], q, desc))
        else:
            same.types.append(t)
    return variants
