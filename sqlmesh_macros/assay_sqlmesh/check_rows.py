"""The rows a failing check found, kept for `assay check rows` (decision 0532, on SQLMesh).

The dbt package keeps them in its materialization (`_capture_check_rows`); here the recorders of
`checks.py` call `keep_rows` right after they decide a check did not pass: a declared check's
violating rows (the generator's query, in its descriptor) or what a SQL check file returned. At
most `KEPT` rows per check and run, each the whole row as JSON text without the redacted columns,
in `<meta>.assay_check_rows`, the dbt target's table, so the command reads either target. For a SQL
check file the generator names the redacted columns by lineage (`assay.lower.check_rows`, decision
0913): every output column derived from a pii value, whatever it is called.
"""

from __future__ import annotations

from typing import Any, Optional

from sqlglot import exp

from ._core import lit
from .json_text import row_json_sql

KEPT = 100  # as the dbt package's default `assay_check_rows_kept`
ROWS_TABLE = "assay_check_rows"
ROWS_COLUMNS = ("run_id", "table_name", "check_id", "row_number", "row_json")
ROWS_TYPES = ("string", "string", "string", "int", "string")


def rows_relation(results: str, dialect: str) -> str:
    """`<meta>.assay_check_rows`, beside the results table."""
    table = exp.to_table(results, dialect=dialect)
    table.set("this", exp.to_identifier(ROWS_TABLE))
    return table.sql(dialect=dialect)


def keep_rows(adapter, dialect: str, results: str, run_id: str, table_name: str, check_id: str,
              rows_sql: str, redact: list[str]) -> Optional[str]:
    """Keep the rows `rows_sql` returns; None when kept, else why not (the engine's message).

    The rows are read as one array of JSON texts, the way the check itself was counted (read-only
    on PostgreSQL: a SQL check file's text is the user's), then written with one INSERT."""
    from .checks import _try_fetchone, ensure_table

    read = (f"SELECT {row_json_sql('assay_r', redact, dialect)} AS assay_j "
            f"FROM (SELECT * FROM ({rows_sql}) AS assay_q LIMIT {KEPT}) AS assay_r")
    gathered = exp.ArrayAgg(this=exp.column("assay_j")).sql(dialect=dialect)
    row, error = _try_fetchone(adapter, f"SELECT {gathered} FROM ({read}) AS assay_s", dialect, read_only=True)
    if error is not None:
        return error
    texts = sorted(str(t) for t in (row[0] if row and row[0] is not None else []) if t is not None)
    if not texts:
        return None
    relation = rows_relation(results, dialect)
    ensure_table(adapter, relation, dialect, ROWS_COLUMNS, ROWS_TYPES)
    keys = ", ".join(lit(v, dialect) for v in (run_id, table_name, check_id))
    values = ", ".join(f"({keys}, {n}, {lit(t, dialect)})" for n, t in enumerate(texts, 1))
    adapter.execute(f"INSERT INTO {relation} ({', '.join(ROWS_COLUMNS)}) VALUES {values}", quote_identifiers=False)
    return None


def redacted(arg: Any) -> list[str]:
    """The recorders' `redact` argument: a JSON list of column names as a string literal, or absent."""
    import json

    if arg is None or isinstance(arg, exp.Null):
        return []
    text = arg.this if isinstance(arg, exp.Literal) else str(arg)
    return sorted(json.loads(text))


def keeps_rows(arg: Any) -> bool:
    """The SQL check recorder's `keep_found` argument: FALSE when the generator could not trace the
    check's output to the columns it comes from (decision 0914: no row is kept); absent is TRUE.

    >>> keeps_rows(None), keeps_rows(exp.false()), keeps_rows(exp.true())
    (True, False, True)
    """
    if arg is None or isinstance(arg, exp.Null):
        return True
    if isinstance(arg, exp.Boolean):
        return bool(arg.this)
    return str(arg.this if isinstance(arg, exp.Literal) else arg).strip().lower() not in ("false", "0")
