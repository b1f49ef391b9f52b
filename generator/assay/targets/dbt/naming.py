"""Names of the dbt nodes assay generates for an entity."""

from __future__ import annotations

from ...ir.model import Entity


def model_name(entity: Entity) -> str:
    """The node a consumer refs: the entity table, or the snapshot of a type-2 entity."""
    return entity.name


def staged_name(entity: Entity) -> str:
    return f"{entity.name}__staged"


def loads_name(entity: Entity) -> str:
    """An incremental entity's bronze per-load counts, counted once per build (decision 0411)."""
    return f"{entity.name}__loads"


def reject_name(entity: Entity) -> str:
    return f"{entity.name}__reject"


def current_name(entity: Entity) -> str:
    """Type-2 entities: the kept rows of this build, which the snapshot versions."""
    return f"{entity.name}__current"


def audited_name(entity: Entity) -> str:
    """The model the `assay_entity` materialization builds, audits and publishes: the entity table,
    or a type-2 entity's `__current` (its snapshot only versions what that model published)."""
    return current_name(entity) if entity.scd == "type2" else model_name(entity)


def ingestion_test_name(source: str) -> str:
    """The ingestion-metadata test of the bronze relation `source`."""
    return f"assay_ingestion_metadata__{source}"


def audits_macro_name(entity: Entity) -> str:
    return f"assay_audits__{entity.name}"


def resolve_macro_name(entity: Entity) -> str:
    """Resolves the open rejects a published build admitted or deduped (run after publishing)."""
    return f"assay_resolve__{entity.name}"


def node_clashes(project_dir, files: dict[str, str]) -> list[tuple[str, str]]:
    """(the user's file, the generated file) for each model or snapshot file of the user's own in a
    dbt project that has the name of one assay generates: dbt refuses a project with two nodes of
    one name ("dbt found two models with the name"), so generating it would leave the project
    unbuildable (an outside tester, session 41). The generated files (`files`) and those assay
    wrote before (its manifest) are assay's and never clash."""
    from pathlib import Path

    from ...artifacts import read_manifest

    project_dir = Path(project_dir)
    ours = set(files) | set(read_manifest(project_dir).get("files", {}))
    generated = {Path(rel).stem: rel for rel in sorted(files)
                 if Path(rel).suffix == ".sql" and Path(rel).parts[0] in ("models", "snapshots")}
    clashes = []
    for folder in ("models", "snapshots"):
        root = project_dir / folder
        for path in sorted(root.rglob("*")) if root.is_dir() else ():
            rel = path.relative_to(project_dir).as_posix()
            if path.suffix in (".sql", ".py") and path.stem in generated and rel not in ours:
                clashes.append((rel, generated[path.stem]))
    return clashes
