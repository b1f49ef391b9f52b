"""The other entities an entity's SQL check files read (decision 0974).

A check file of an entity may join another entity of the project
(`select r.* from silver.reading r left join silver.station s on ... where s.station_id is null`).
Its count runs inside the entity's build, so that other entity must have been built first: on dbt
the entity's model depends on it (`-- depends_on: {{ ref('station') }}`), on SQLMesh its model
names it in `depends_on`. Without that, the first build ran the check before the other table
existed (recorded `errored`) and every later build judged against its previous version.

This module decides which entities those are, from the parsed SQL (sqlglot, never a text search),
so both targets spell the same dependencies; validation refuses a check that would make two
entities wait for each other.
"""

from __future__ import annotations

from typing import Iterable

import sqlglot
from sqlglot import exp

from ..ir.model import Entity, Project


def entities_read(sql: str, namespace: str, table: str, silver: str, entity_names: Iterable[str]) -> tuple[str, ...]:
    """Sorted names of the entities (tables of schema `silver`, or unqualified names, as the
    check's own table may be written) the check reads besides its own table `namespace.table`.
    A CTE's name is not a table; SQL that does not parse reads nothing (validation refuses it)."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:  # noqa: BLE001 - refused by validation at the file; nothing to order here
        return ()
    names = {n.lower(): n for n in entity_names}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    found = set()
    for t in tree.find_all(exp.Table):
        name, db = t.name.lower(), (t.db or "").lower()
        if not name or name not in names or (not db and name in ctes):
            continue
        if db and db != silver.lower():
            continue  # a table of another schema: bronze or a table assay only reads
        if name == table.lower() and (not db or db == namespace.lower()):
            continue  # its own table: the candidate
        found.add(names[name])
    return tuple(sorted(found))


def check_dependencies(entity: Entity, project: Project) -> tuple[str, ...]:
    """Sorted names of the other entities the SQL check files of `entity` read: each must be
    built before `entity`'s checks run."""
    silver = project.schema("silver")
    names = [e.name for e in project.entities]
    return tuple(sorted({n for c in entity.sql_checks for n in entities_read(c.sql, c.namespace, c.table, silver, names)}))


def upstream_entities(entity: Entity, project: Project) -> tuple[str, ...]:
    """Sorted names of the other entities `entity`'s models read and so wait for: its referential
    parents and the entities its SQL check files join (decision 0974). When one is not written,
    dbt and SQLMesh skip `entity` too, and it is set back with why `upstream_failed` (0940, 0963)."""
    parents = {r.param("parent") for r in entity.rules_of_kind("referential")}
    return tuple(sorted((parents | set(check_dependencies(entity, project))) - {entity.name}))
