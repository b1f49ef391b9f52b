"""Names of the SQLMesh models assay generates. Schemas and table names match the dbt target's,
so one query reads either project: `silver.<entity>`, `silver.<entity>__reject`, ..."""

from __future__ import annotations

from sqlglot import exp

from ...ir.model import Entity, Project
from ...lower.spelling import is_simple


def staged(project: Project, entity: Entity) -> str:
    return f"{project.schema('silver')}.{entity.name}__staged"


def entity_model(project: Project, entity: Entity, dialect: str) -> str:
    """The model consumers read: the entity table, or the SCD type 2 history of a type-2 entity.

    The only name of an entity's models without a suffix, so the only one that can be a reserved
    word (`select`, `from`): sqlglot, and so SQLMesh, does not read `silver.select` as a table.
    An entity name is lower-case, so the quoted name is the relation the unquoted one would be
    on every engine, and dbt's relation of the same name (decision 0985).
    """
    name = exp.to_identifier(entity.name, quoted=not is_simple(entity.name)).sql(dialect=dialect)
    return f"{project.schema('silver')}.{name}"


def current(project: Project, entity: Entity) -> str:
    """Type-2 entities: the kept rows of this build, which the SCD type 2 model versions."""
    return f"{project.schema('silver')}.{entity.name}__current"


def admitted(project: Project, entity: Entity, dialect: str) -> str:
    """The relation holding an entity's admitted rows of this build (current versions only)."""
    return current(project, entity) if entity.scd == "type2" else entity_model(project, entity, dialect)


def reject(project: Project, entity: Entity) -> str:
    return f"{project.schema('silver')}.{entity.name}__reject"


def bronze(project: Project, source: str) -> str:
    return f"{project.schema('bronze')}.{source}"


def mart(project: Project) -> str:
    """The quality history readers read: a view over every entity's part (decision 0969)."""
    return f"{project.schema('gold')}.mart_data_quality"


def stopped_counts(project: Project) -> str:
    """The plain table the staged models write the counts of a build their key audit stops into,
    read by the mart's view beside the parts (decision 1143). In the meta schema, with assay's
    other plain tables: no entity's part can take its name."""
    return f"{project.schema('meta')}.assay_stopped_counts"


def mart_part(project: Project, entity: Entity) -> str:
    """The table an entity's runs append their mart rows to (decision 0969)."""
    return f"{mart(project)}__{entity.name}"


def cross_checks(project: Project) -> str:
    return f"{project.schema('meta')}.assay_cross_entity_checks"


