"""The dbt staged model of a full-rebuild entity: the staged relation under a table config.

The relation itself (extract, delivery rank, dedupe, probes, judgement, route) is decided
once in assay.lower.staged; this module adds only what is dbt's: the config block.
"""

from __future__ import annotations

from ...ir.model import Entity, Project
from ...lower.staged import staged_query, staged_relation
from .spelling import DBT, jstr


def staged_sql(entity: Entity, project: Project, header: str) -> str:
    """The staged model's file text."""
    config = "{{ config(materialized='table', schema=" + jstr(project.schema("silver")) + ", tags=['assay', 'assay_staged']) }}"
    return "\n".join([header, config, "", staged_query(DBT, staged_relation(DBT, entity, project))])
