"""The audit of one table check on SQLMesh: the recorded result of this run when it did not pass.

The recorders (checks.py) measure every check once and record it in ``<meta>.assay_check_results``;
each check's inline audit (blocking for ``required`` and ``block``, non-blocking for ``advisory``
and ``warn``) has the body ``@assay_check_failures(...)``, which reads that record back. SQLMesh
says of a failed audit ``'<audit>' audit error: N rows failed``, N the rows its query returns; so
the body returns the recorded row once per row the check found failing (decision 0945): a SQL
check file's returned rows, a declared check's violating rows (null, outside its range, repeating
its key), a rate or change threshold's counted rows (decision 0949), as `assay checks` and `assay
check list` count them (runtime/check_results.outcome_of). A check that counts no rows (a row count,
a gap, a volume change, an anomaly, an errored query) returns its row once.
"""

from __future__ import annotations

from typing import Optional

from sqlglot import exp
from sqlmesh import macro

from ._core import dialect_of, lit, parse_one
from .checks import _results_exist, _string

# Ten rows of one column in SQL every engine reads (no VALUES list, no series function: their
# spellings differ); crossed with itself, as many rows as a count needs.
_TEN = "(" + " UNION ALL ".join(f"SELECT {i} AS assay_digit" for i in range(10)) + ")"


def _repeated(sql: str, rows: int) -> str:
    """`sql` (at most one row) returned `rows` times: crossed with ten rows per decimal digit of
    `rows`, cut by LIMIT, so the engine makes no more rows than that."""
    if rows <= 1:
        return sql
    digits = len(str(rows - 1))
    tens = " CROSS JOIN ".join(f"{_TEN} AS assay_ten{i}" for i in range(digits))
    return f"SELECT assay_failed.* FROM ({sql}) AS assay_failed CROSS JOIN {tens} LIMIT {rows}"


@macro()
def assay_check_failures(evaluator, results, table_name, check_id, on_failure=None) -> exp.Expr:
    """The audit body of one check: its recorded result of this run when it did not pass.

    The row carries 000's sentence (``CHECK_ID: detail``), rendered from the recorded numbers,
    so SQLMesh's audit error shows what was measured, and it is returned once per failing row the
    check found (the module docstring). A ``warn`` SQL check is recorded as passed (002: it warns,
    it does not fail); its non-blocking audit reports it from the row count. Without a run
    (``sqlmesh audit`` outside a plan) the table's latest recorded run is judged.

    >>> from assay_sqlmesh import render_sql
    >>> print(render_sql("@assay_check_failures('meta.r', 'order', 'ENOUGH_ROWS')", "duckdb"))
    SELECT run_id, table_name, check_id, NULL AS detail FROM meta.r WHERE run_id = (SELECT MAX(run_id) FROM meta.r WHERE table_name = 'order' AND recorded_at = (SELECT MAX(recorded_at) FROM meta.r WHERE table_name = 'order')) AND table_name = 'order' AND check_id = 'ENOUGH_ROWS' AND NOT passed AND measures NOT LIKE '%"not_evaluated":%'
    >>> print(_repeated("SELECT 1", 12).replace(_TEN, "<ten rows>"))
    SELECT assay_failed.* FROM (SELECT 1) AS assay_failed CROSS JOIN <ten rows> AS assay_ten0 CROSS JOIN <ten rows> AS assay_ten1 LIMIT 12
    """
    d = dialect_of(evaluator)
    relation = exp.to_table(_string(results), dialect=d).sql(dialect=d)
    tname, cid = _string(table_name), _string(check_id)
    adapter = evaluator.locals.get("engine_adapter")
    correlation = getattr(adapter, "correlation_id", None)
    if correlation is not None:
        run = lit(str(correlation), d)
    else:
        run = (f"(SELECT MAX(run_id) FROM {relation} WHERE table_name = {lit(tname, d)} AND recorded_at = "
               f"(SELECT MAX(recorded_at) FROM {relation} WHERE table_name = {lit(tname, d)}))")
    # A warn file passes with rows (002: it warns); its warning fires on rows, or when it errored.
    warn = on_failure is not None and _string(on_failure) == "warn"
    # not_evaluated (over a budget) reads as not passed but never fails the run (000).
    failed = "(row_count > 0 OR NOT passed)" if warn else "NOT passed AND measures NOT LIKE '%\"not_evaluated\":%'"
    detail, rows = "NULL", 1
    stage = evaluator.locals.get("runtime_stage")
    if adapter is not None and getattr(stage, "value", stage) == "auditing":
        sentence, rows = _recorded(adapter, relation, run, tname, cid, d)
        detail = lit(sentence, d)
    sql = (f"SELECT run_id, table_name, check_id, {detail} AS detail FROM {relation} "
           f"WHERE run_id = {run} AND table_name = {lit(tname, d)} AND check_id = {lit(cid, d)} AND {failed}")
    return parse_one(_repeated(sql, rows), read=d)


def _recorded(adapter, relation: str, run: str, table: str, check_id: str, dialect: str) -> tuple[Optional[str], int]:
    """(``CHECK_ID: detail``, the rows it found failing, at least 1) of the recorded result, or
    (None, 1) when there is none."""
    from assay.checks.recorded import verdict_of_row
    from assay.runtime.check_results import outcome_of

    if not _results_exist(adapter, exp.to_table(relation, dialect=dialect), dialect):
        return None, 1
    row = adapter.fetchone(
        f"SELECT kind, check_spec, measures, enforcement, passed FROM {relation} WHERE run_id = {run} "
        f"AND table_name = {lit(table, dialect)} AND check_id = {lit(check_id, dialect)}",
        quote_identifiers=False,
    )
    if not row:
        return None, 1
    kind, spec, measures, enforcement, passed = row
    failing = outcome_of(kind, enforcement, bool(passed), measures)[1]
    return f"{check_id}: {verdict_of_row(kind, spec, measures).detail}", max(failing or 0, 1)
