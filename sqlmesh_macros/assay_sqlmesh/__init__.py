"""assay_sqlmesh: the SQLMesh macros that assay-generated projects call.

Every macro is a typed function returning a sqlglot expression, rendered for the engine the
model runs on (see `_core.dialect_of`). Names start with `assay_` because SQLMesh macros share
one namespace with the project's own.

Loading. SQLMesh snapshots its macro registry around each project load and imports the
project's `macros/*.py` afresh, but a library module is imported once per process, so its
`@macro()` decorators run once: a second `Context` in the same process would not see the
macros. A generated project therefore calls `register()` from `macros/assay_macros.py`, which
puts every macro back into the registry on each load. Model snapshots store each macro as an
import (`from assay_sqlmesh import assay_try_cast`), so evaluation needs this package installed,
not the project's files.
"""

from __future__ import annotations

from sqlmesh.core.macros import macro

from . import audits, casts, check_audits, checks, environments, flags, json_text, model_errors, stopped_counts, temporal, text
from ._core import AssayMacroError, dialect_of
from .audits import (
    assay_coverage_violations,
    assay_fail_rule_violations,
    assay_freshness_violations,
    assay_ingestion_metadata_violations,
    assay_key_uniqueness_violations,
    assay_reconcile_violations,
)
from .check_audits import assay_check_failures
from .checks import assay_continuity_gap, assay_record_declared_checks, assay_record_sql_check
from .environments import assay_record_environment
from .model_errors import assay_model_begins, assay_model_ends, assay_record_errored_models
from .stopped_counts import assay_mart_table, assay_record_stopped_counts
from .casts import assay_cast, assay_coercion_failed, assay_install_functions, assay_try_cast
from .flags import (
    assay_flags_contain,
    assay_flags_to_text,
    assay_quality_flags,
    assay_quality_ok,
    assay_reject_id,
    assay_run_id,
    assay_run_timestamp,
    assay_unknown_member,
)
from .json_text import assay_json_extract_text, assay_json_object, assay_json_path_blocked, assay_json_valid, assay_row_json
from .temporal import assay_ingestion_timestamp, assay_parse_date, assay_parse_ts, assay_to_utc
from .text import assay_byte_order, assay_char_length, assay_charset_violates, assay_is_nfc, assay_regex_extract, assay_regex_matches, assay_trim_white_space

__version__ = "0.1.0"

MODULES = (audits, casts, check_audits, checks, environments, flags, json_text, model_errors, stopped_counts, temporal,
           text)


def macros() -> dict:
    """Every assay macro, name -> decorated function, sorted by name."""
    found = {}
    for module in MODULES:
        for name, value in vars(module).items():
            if name.startswith("assay_") and callable(value) and hasattr(value, "__wrapped__"):
                found[name] = value
    return dict(sorted(found.items()))


def register() -> list[str]:
    """Put every assay macro into SQLMesh's macro registry; returns their names.

    Safe to call any number of times: the registry keeps one entry per name and an identical
    function re-registers silently.
    """
    for name, fn in macros().items():
        macro(name)(fn.__wrapped__)
    return list(macros())


def render_sql(sql: str, dialect: str = "duckdb", **variables) -> str:
    """Expand the assay macros in `sql` for `dialect` and return the SQL (docstring examples, tests).

    `variables` become macro variables (`execution_ts`, ...).
    """
    from sqlglot import exp

    from sqlmesh.core.dialect import parse_one as parse_sqlmesh
    from sqlmesh.core.macros import MacroEvaluator

    register()
    evaluator = MacroEvaluator(dialect=dialect)
    evaluator.locals.update(variables)
    expression = evaluator.transform(parse_sqlmesh(sql, dialect=dialect))
    if isinstance(expression, list):  # pragma: no cover - a macro returning several statements
        return ";\n".join(e.sql(dialect=dialect) for e in expression)
    assert isinstance(expression, exp.Expr)
    return expression.sql(dialect=dialect)


__all__ = ["AssayMacroError", "dialect_of", "macros", "register", "render_sql", *sorted(macros())]
