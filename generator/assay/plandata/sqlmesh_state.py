"""SQLMesh's state, copied into a scratch PostgreSQL database, moved to that database's catalog (decision 1020).

SQLMesh names every model, and so every snapshot, environment entry and interval, with the
gateway's database as its catalog (`"warehouse"."silver"."item"`). A copy in a scratch database
is another catalog: a Context there names its models `"assay_plan_<hex>"."silver"."item"`, and
PostgreSQL does not read across databases, so the copied state must name the scratch catalog.

The move uses SQLMesh's own state API: `state_sync.export()` (what `sqlmesh state export` writes),
then the parsed snapshots and environments are rewritten, and `state_sync.import_(clear=True)`
(what `sqlmesh state import --replace` does) writes them back, all in the scratch database:
- names are rewritten as parsed tables (sqlglot), only where SQLMesh keeps them: a snapshot's and
  its parents' names, the model's `default_catalog` and the catalog keys of its
  `mapping_schema`, the environments' snapshot entries;
- the fingerprints are computed again by SQLMesh (`fingerprint_from_node`) from the moved nodes:
  a model's metadata hash covers its `mapping_schema`, which names the catalog, so an unchanged
  model's fingerprint in the sandbox is not the warehouse's. Versions (the physical tables'
  names) depend on data hashes only and stay;
- afterwards nothing may still name the old catalog: anything that does is a place SQLMesh keeps a
  name this module does not know, and the sandbox is refused rather than half moved.
Only the environments' snapshots move (`export` takes those): a snapshot no environment holds is
one SQLMesh would only reuse on a revert to it, and the sandbox's plan then rebuilds instead.
"""

from __future__ import annotations

import typing as t
from contextlib import contextmanager
from pathlib import Path

from ..errors import WarehouseError


def _moved_name(name: str, old: str, new: str) -> str:
    from sqlglot import exp

    table = exp.to_table(name)
    if table.catalog != old:
        return name
    table.set("catalog", exp.to_identifier(new, quoted=True))
    return exp.table_name(table, identify=True)


def _moved_ids(ids, old: str, new: str) -> list:
    return [{**i, "name": _moved_name(i["name"], old, new)} for i in ids or []]


def _moved_node(node: dict, old: str, new: str) -> dict:
    from sqlglot import exp

    node = dict(node)
    if node.get("default_catalog") == old:
        node["default_catalog"] = new
    schema = node.get("mapping_schema") or {}
    node["mapping_schema"] = {(exp.to_identifier(new, quoted=True).sql() if exp.parse_identifier(k).name == old else k): v
                              for k, v in schema.items()}
    if node.get("depends_on"):
        node["depends_on"] = sorted(_moved_name(n, old, new) for n in node["depends_on"])
    return node


def _moved_infos(infos, old: str, new: str, fingerprints: dict) -> t.Optional[list]:
    if infos is None:
        return None
    out = []
    for info in infos:
        moved = {**info, "name": _moved_name(info["name"], old, new),
                 "parents": _reidentified(info.get("parents"), old, new, fingerprints)}
        moved["fingerprint"] = fingerprints.get((info["name"], _identifier(info["fingerprint"])), info["fingerprint"])
        out.append(moved)
    return out


def _identifier(fingerprint: dict) -> str:
    from sqlmesh.core.snapshot.definition import SnapshotFingerprint

    return SnapshotFingerprint(**fingerprint).to_identifier()


def _reidentified(ids, old: str, new: str, fingerprints: dict) -> list:
    out = []
    for i in ids or []:
        fp = fingerprints.get((i["name"], i["identifier"]))
        out.append({"name": _moved_name(i["name"], old, new), "identifier": _identifier(fp) if fp else i["identifier"]})
    return out


def _still_named(value, old: str, path: str = "") -> list[str]:
    """Where `value` still names the catalog `old` (a quoted identifier, or a catalog field)."""
    quoted = f'"{old}"'
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if quoted in str(k) or ("catalog" in str(k) and v == old):
                found.append(f"{path}.{k}")
            found += _still_named(v, old, f"{path}.{k}")
    elif isinstance(value, (list, tuple)):
        for n, v in enumerate(value):
            found += _still_named(v, old, f"{path}[{n}]")
    elif isinstance(value, str) and quoted in value:
        found.append(path)
    return found


def move_catalog(state_sync, old: str, new: str) -> int:
    """Rewrite the state behind `state_sync` (the scratch database's copy) from catalog `old` to
    `new` (see the module docstring); the snapshots moved."""
    from sqlmesh.core.snapshot.definition import Snapshot, fingerprint_from_node
    from sqlmesh.core.state_sync.common import (EnvironmentsChunk, EnvironmentWithStatements, SnapshotsChunk, StateStream,
                                                VersionsChunk)
    from sqlmesh.utils.pydantic import DEFAULT_ARGS

    versions, snapshots, environments = None, [], []
    for chunk in state_sync.export():
        if isinstance(chunk, VersionsChunk):
            versions = chunk.versions
        elif isinstance(chunk, SnapshotsChunk):
            snapshots = [s.model_dump(mode="json", **DEFAULT_ARGS) for s in chunk]
        elif isinstance(chunk, EnvironmentsChunk):
            environments = [e.model_dump(mode="json", **DEFAULT_ARGS) for e in chunk]
    # names and nodes first; parents' identifiers once every fingerprint is known
    keyed = {(s["name"], _identifier(s["fingerprint"])): s for s in snapshots}
    moved = {key: {**s, "name": _moved_name(s["name"], old, new), "node": _moved_node(s["node"], old, new)}
             for key, s in keyed.items()}
    parsed = {key: Snapshot.model_validate({**m, "parents": []}) for key, m in moved.items()}
    fingerprints: dict = {}  # (old name, old identifier) -> new fingerprint
    for env in environments:
        # SQLMesh's own fingerprint of each moved node, over the environment's nodes (its parents)
        members = [key for key in ((i["name"], _identifier(i["fingerprint"])) for i in env["environment"]["snapshots"])
                   if key in parsed]
        nodes = {parsed[key].name: parsed[key].node for key in members}
        cache: dict = {}
        for key in members:
            fp = fingerprint_from_node(parsed[key].node, nodes=nodes, cache=cache).model_dump(mode="json", **DEFAULT_ARGS)
            if fingerprints.setdefault(key, fp) != fp:
                raise WarehouseError(f"SQLMesh's state holds {key[0]} with two different parents in two environments; "
                                     "the sandbox cannot move it to the scratch database's catalog (decision 1020).")
    for key, snap in moved.items():
        snap["fingerprint"] = fingerprints.get(key, snap["fingerprint"])
        snap["parents"] = _reidentified(keyed[key].get("parents"), old, new, fingerprints)
    for env in environments:
        e = env["environment"]
        e["snapshots"] = _moved_infos(e["snapshots"], old, new, fingerprints)
        e["previous_finalized_snapshots"] = _moved_infos(e.get("previous_finalized_snapshots"), old, new, fingerprints)
        if e.get("promoted_snapshot_ids") is not None:
            e["promoted_snapshot_ids"] = _reidentified(e["promoted_snapshot_ids"], old, new, fingerprints)
    left = _still_named(list(moved.values()), old, "snapshots") + _still_named(environments, old, "environments")
    if left:
        raise WarehouseError(f"SQLMesh's state names the warehouse's catalog {old!r} where `assay plan --data` does not "
                             f"know how to move it ({', '.join(left[:5])}); decision 1020.")
    state_sync.import_(StateStream.from_iterators(
        versions=versions,
        snapshots=iter([Snapshot.model_validate(s) for s in moved.values()]),
        environments=iter([EnvironmentWithStatements.model_validate(e) for e in environments])), clear=True)
    return len(moved)


@contextmanager
def _state_sync(connection, database: str, schema: str, cache: Path):
    """SQLMesh's state in `database`, through the gateway's own connection settings (its cache of
    snapshots in `cache`, not the working directory)."""
    from sqlmesh.core.state_sync.db.facade import EngineAdapterStateSync

    adapter = connection.model_copy(update={"database": database}).create_engine_adapter()
    try:
        yield EngineAdapterStateSync(adapter, schema=schema, cache_dir=cache)
    finally:
        adapter.close()


@contextmanager
def scratch_state(connection, state_schema: t.Optional[str], schemas: list[str], cache: Path) -> t.Iterator[str]:
    """The name of a scratch database on the gateway's server (plandata/pgcopy.py) holding the
    warehouse's SQLMesh state, moved to the scratch database's catalog, the schemas its
    environments name (the views' and the physical tables') and `schemas`; dropped when the block
    ends, also on failure. `connection`: the gateway's SQLMesh connection config (PostgreSQL);
    `state_schema`: the gateway's (an empty one puts the state tables on the search path, `public`)."""
    from sqlglot import exp

    from .pgcopy import scratch_database

    state_schema = state_schema or None
    settings = connection.model_dump()
    output = {**settings, "dbname": settings["database"]}
    catalogs: set = set()

    def more(name: str) -> list[str]:
        # the state is copied first; the schemas it names are read from the copy
        with _state_sync(connection, name, state_schema, cache) as sync:
            if not sync.engine_adapter.table_exists(exp.table_("_environments", db=state_schema)):
                return list(schemas)
            infos = [s for env in sync.get_environments() for s in env.snapshots]
        catalogs.update(exp.to_table(s.name).catalog for s in infos)
        return [*schemas, *{s.physical_schema for s in infos}, *{exp.to_table(s.name).db for s in infos}]

    with scratch_database(output, [state_schema or "public"], more=more) as name:
        if len(catalogs) > 1:
            raise WarehouseError(f"SQLMesh's state names models in more than one catalog ({', '.join(sorted(catalogs))}); "
                                 "`assay plan --data` copies one PostgreSQL database (decision 1020).")
        if catalogs:
            with _state_sync(connection, name, state_schema, cache) as sync:
                move_catalog(sync, catalogs.pop(), name)
        yield name
