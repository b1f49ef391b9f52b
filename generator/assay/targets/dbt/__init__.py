"""The dbt target: a pure function from the IR to the files assay owns in a dbt project."""

from __future__ import annotations

from ..header import entity_files as _entity_files, header
from ...ir.model import Project
from .declared_checks import RESULTS_TABLE, results_model_sql
from ...lower.audits import bronze_audits
from .incremental import incremental_staged_sql, ingestion_rows_macro, loads_sql
from .mart import mart_rows_macro, mart_sql
from .naming import audited_name, loads_name, reject_name, staged_name
from .outputs import audits_macro, entity_sql, history_sql, reject_sql, snapshot_sql
from .snapshot_clock import snapshot_clock_macro
from .properties import dump_yaml, entity_yml, sources_yml
from .spelling import inert
from .staged import staged_sql
from .table_checks import table_check_files, with_reader_depends_on
from .kept import EVENTS_MODEL, events_model_sql, staged_with_gate

MODELS_DIR = "models/assay"
SNAPSHOTS_DIR = "snapshots/assay"
MACROS_DIR = "macros/assay"
PACKAGE_DIR = "assay_packages/assay"


def _header(project: Project, files: list[str], comment: str) -> str:
    """The header line; in SQL, where dbt renders Jinja even inside comments, made inert."""
    text = header(project, files, comment)
    return inert(text) if comment == "--" else text


def _jinja_comment_header(project: Project, files: list[str]) -> str:
    """The header as a Jinja comment, which nothing inside ends but `#}` (escaped)."""
    return "{# " + header(project, files, "").strip().replace("#}", "#\\u007d") + " #}"


def generate_dbt(project: Project) -> dict[str, str]:
    """Every file assay owns in the user's dbt project, as relative path -> text."""
    out: dict[str, str] = {}
    for e in project.entities:
        sql_h = _header(project, _entity_files(e), "--")
        jinja_h = _jinja_comment_header(project, _entity_files(e))
        yml_h = _header(project, _entity_files(e), "#")
        base = f"{MODELS_DIR}/{e.name}"
        staged = incremental_staged_sql if e.materialized == "incremental" else staged_sql
        out[f"{base}/{staged_name(e)}.sql"] = staged_with_gate(with_reader_depends_on(staged(e, project, sql_h), e, project), e, project)
        out[f"{base}/{audited_name(e)}.sql"] = entity_sql(e, project, sql_h)
        if e.materialized == "incremental":
            out[f"{base}/{loads_name(e)}.sql"] = loads_sql(e, project, sql_h)
        if e.has_reject:
            out[f"{base}/{reject_name(e)}.sql"] = reject_sql(e, project, sql_h)
        out[f"{base}/_{e.name}.yml"] = yml_h + "\n" + dump_yaml(entity_yml(e, project))
        out[f"{MACROS_DIR}/audits/{e.name}.sql"] = audits_macro(e, jinja_h, project)
        if e.scd == "type2":
            out[f"{SNAPSHOTS_DIR}/{e.name}.sql"] = snapshot_sql(e, project, sql_h)
            out[f"{base}/{e.name}.sql"] = history_sql(e, project, sql_h)
    all_files = list(project.spec_files)
    for b in bronze_audits(project):
        if b.settled_by:  # the rows its metadata test reads (decision 0408)
            e, m = b.settled_by
            out[f"{MACROS_DIR}/ingestion/{b.source}.sql"] = ingestion_rows_macro(e, m, _jinja_comment_header(project, _entity_files(e)))
    out[f"{MODELS_DIR}/sources.yml"] = _header(project, all_files, "#") + "\n" + dump_yaml(sources_yml(project))
    out[f"{MODELS_DIR}/mart_data_quality.sql"] = mart_sql(project, _header(project, all_files, "--"))
    out[f"{MACROS_DIR}/mart_rows.sql"] = mart_rows_macro(project, _jinja_comment_header(project, all_files))
    results = results_model_sql(project, _header(project, all_files, "--"))
    if results:
        out[f"{MODELS_DIR}/{RESULTS_TABLE}.sql"] = results
    events = events_model_sql(project, _header(project, all_files, "--"))
    if events:
        out[f"{MODELS_DIR}/{EVENTS_MODEL}.sql"] = events
    # Checks of tables assay only reads: a check task each, before what reads them (decision 0520).
    out.update(table_check_files(project, lambda files, c: _header(project, files, c), MODELS_DIR, MACROS_DIR))
    clock = snapshot_clock_macro(project, _jinja_comment_header(project, all_files))
    if clock:
        out[f"{MACROS_DIR}/snapshot_clock.sql"] = clock
    return dict(sorted(out.items()))
