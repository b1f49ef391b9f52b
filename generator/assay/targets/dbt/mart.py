"""gold.mart_data_quality for dbt: the mart query (assay.lower.mart) under an append-only config.

Incremental with `full_refresh=false`: every run appends, so history survives rule changes.
"""

from __future__ import annotations

from ...ir.model import Project
from ...lower.mart import mart_query
from .naming import model_name
from .spelling import DBT, jstr


def mart_sql(project: Project, header: str) -> str:
    """The mart's file text."""
    deps: list[str] = []
    config = (
        "{{ config(materialized='incremental', incremental_strategy='append', full_refresh=false, "
        f"schema={jstr(project.schema('gold'))}, tags=['assay']) }}}}"
    )
    return "\n".join([header, config, *deps, "", mart_query(DBT, project)])
