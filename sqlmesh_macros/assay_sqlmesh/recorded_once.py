"""One result per check and run, however often SQLMesh evaluates a model in that run.

000 and 002: each check of a run has one result. SQLMesh may evaluate a model more than once in
one run (a development environment run on another clock than the plan that built it evaluated an
entity in two batches of its intervals), and the recorders, post-statements of the model, ran
each time: every check was recorded twice under one run id, and its kept rows too, so
`assay checks` listed each twice and `check list` kept more rows than the check found (an outside
tester, session 49). The table is what the last evaluation wrote, so its results replace the
earlier ones of the same run: the recorders call `replace_earlier` before they record. Which
checks a run recorded is remembered in this process (SQLMesh evaluates a run's models in one),
so an evaluation that is the run's first costs no query.
"""

from __future__ import annotations

import threading

from ._core import lit
from .check_rows import rows_relation

#: (run id, table, check) recorded by this process.
_SEEN: set[tuple[str, str, str]] = set()
_LOCK = threading.Lock()


def replace_earlier(adapter, dialect: str, results: str, run_id: str, table: str, check_ids: list[str]) -> None:
    """Delete what an earlier evaluation of `table` in run `run_id` recorded for `check_ids` (its
    results and its kept rows), and remember that this one records them."""
    with _LOCK:
        again = sorted({c for c in check_ids if (run_id, table, c) in _SEEN})
        _SEEN.update((run_id, table, c) for c in check_ids)
    if not again:
        return
    from sqlglot import exp

    from .checks import _results_exist

    ids = ", ".join(lit(c, dialect) for c in again)
    for relation in (results, rows_relation(results, dialect)):
        if _results_exist(adapter, exp.to_table(relation, dialect=dialect), dialect):
            adapter.execute(f"DELETE FROM {relation} WHERE run_id = {lit(run_id, dialect)} AND table_name = "
                            f"{lit(table, dialect)} AND check_id IN ({ids})", quote_identifiers=False)
