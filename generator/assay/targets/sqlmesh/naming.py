"""Names of the SQLMesh models assay generates. Schemas and table names match the dbt target's,
so one query reads either project: `silver.<entity>`, `silver.<entity>__reject`, ..."""

from __future__ import annotations

from ...ir.model import Entity, Project


def staged(project: Project, entity: Entity) -> str:
    return f"{project.schema('silver')}.{entity.name}__staged"


def entity_model(project: Project, entity: Entity) -> str:
    """The model consumers read: the entity table, or the SCD type 2 history of a type-2 entity."""
    return f"{project.schema('silver')}.{entity.name}"


def current(project: Project, entity: Entity) -> str:
    """Type-2 entities: the kept rows of this build, which the SCD type 2 model versions."""
    return f"{project.schema('silver')}.{entity.name}__current"


def admitted(project: Project, entity: Entity) -> str:
    """The relation holding an entity's admitted rows of this build (current versions only)."""
    return current(project, entity) if entity.scd == "type2" else entity_model(project, entity)


def reject(project: Project, entity: Entity) -> str:
    return f"{project.schema('silver')}.{entity.name}__reject"


def bronze(project: Project, source: str) -> str:
    return f"{project.schema('bronze')}.{source}"


def mart(project: Project) -> str:
    return f"{project.schema('gold')}.mart_data_quality"


def cross_checks(project: Project) -> str:
    return f"{project.schema('meta')}.assay_cross_entity_checks"


