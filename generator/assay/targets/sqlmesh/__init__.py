"""The SQLMesh target: a pure function from the IR to the files assay owns in a SQLMesh project.

Layout (relative to the project root):
- models/assay/<entity>/<entity>__staged.sql, <entity>.sql (or <entity>__current.sql plus the
  SCD type 2 <entity>.sql), <entity>__reject.sql, mart_data_quality__<entity>.sql (the entity's
  part of the quality history)
- models/assay/mart_data_quality.sql (the view over the parts), models/assay/assay_cross_entity_checks.sql
  (when the spec has coverage or reconcile checks)
- audits/assay.sql: the reusable audits, thin AUDIT blocks over assay_sqlmesh macros
- macros/assay_macros.py: registers the assay_sqlmesh macros on every load
- external_models/assay_bronze.yaml: bronze relations with their ingestion and freshness audits
  (a file of assay's own beside the user's external_models.yaml, which assay never touches)

No SQLMesh import here: generation needs sqlglot only.
"""

from __future__ import annotations

from ..header import entity_files as _entity_files, header as _header
from ...ir.model import Project
from .spelling import SqlmeshSpelling
from .mart import cross_checks_sql, mart_part_sql, mart_sql
from .outputs import entity_sql, reject_sql, scd2_sql
from .project_files import audits_sql, external_models_yaml, macros_py
from .staged import staged_sql

MODELS_DIR = "models/assay"
DIALECTS = ("bigquery", "databricks", "duckdb", "postgres", "redshift", "snowflake", "spark", "trino")


def generate_sqlmesh(project: Project, dialect: str = "duckdb") -> dict[str, str]:
    """Every file assay owns in the user's SQLMesh project, as relative path -> text, sorted.

    `dialect` is the dialect the models are written in (each MODEL block names it); the macros
    render for whichever engine actually runs them. The project must be validated for this
    target (`compile_spec(spec, target="sqlmesh")`), which refuses what it cannot realise.
    """
    if dialect not in DIALECTS:
        raise ValueError(f"unknown SQLMesh dialect {dialect!r}; one of {', '.join(DIALECTS)}")
    low = SqlmeshSpelling(dialect, project)
    out: dict[str, str] = {}
    for e in project.entities:
        h = _header(project, _entity_files(e), "--")
        base = f"{MODELS_DIR}/{e.name}"
        out[f"{base}/{e.name}__staged.sql"] = staged_sql(e, project, low, h)
        if e.scd == "type2":
            out[f"{base}/{e.name}__current.sql"] = entity_sql(e, project, low, h)
            out[f"{base}/{e.name}.sql"] = scd2_sql(e, project, low, h)
        else:
            out[f"{base}/{e.name}.sql"] = entity_sql(e, project, low, h)
        if e.has_reject:
            out[f"{base}/{e.name}__reject.sql"] = reject_sql(e, project, low, h)
        out[f"{base}/mart_data_quality__{e.name}.sql"] = mart_part_sql(project, e, low, h)
    all_files = list(project.spec_files)
    out[f"{MODELS_DIR}/mart_data_quality.sql"] = mart_sql(project, low, _header(project, all_files, "--"))
    checks = cross_checks_sql(project, low, _header(project, all_files, "--"))
    if checks is not None:
        out[f"{MODELS_DIR}/assay_cross_entity_checks.sql"] = checks
    out["audits/assay.sql"] = audits_sql(low, _header(project, all_files, "--"), project)
    out["macros/assay_macros.py"] = macros_py(_header(project, all_files, "#"))
    out["external_models/assay_bronze.yaml"] = external_models_yaml(project, _header(project, all_files, "#"))
    return dict(sorted(out.items()))
