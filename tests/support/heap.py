"""The garbage collector of the tests' long-lived processes, set for what they hold.

A test process, the dbt server and the Spark child each import dbt, SQLMesh, sqlglot and their
dependencies once and keep those objects (modules, classes, functions, compiled templates: over
200,000 tracked objects) for their whole life. CPython's collector still traverses them in every older
collection, and with its default thresholds (700, 10, 10) it collects every few hundred
allocations, which the parsing and rendering in a dbt command or a SQLMesh plan make by the
million. Measured side by side here: about 10% of a dbt command's CPU and of an in-process SQLMesh
suite's went to that (tests/README.md, "Where the time goes", session 20).

`gc.freeze()` moves everything alive now out of the collector's view (for a forked dbt child, the
server's objects it inherits: the child's collections no longer touch them, nor dirty their shared
pages); the higher thresholds collect young objects every 20,000 allocations instead of 700. Nothing
is kept alive that would otherwise be freed: reference counting frees what is not in a cycle as
before, and cycles are still collected, later. What the code under test computes does not change.
"""

from __future__ import annotations

import gc

THRESHOLDS = (20_000, 20, 20)


def settle() -> None:
    """Collect once, freeze what survives (the imports), and raise the young-generation threshold."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
