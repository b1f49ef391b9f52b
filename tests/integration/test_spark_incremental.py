"""An incremental entity on Apache Spark (local mode, parquet): the first three steps of
tests/integration/test_incremental_dbt.py's story, every row compared with the story written out
by hand there.

On Spark the ledger is built by `assay_keyed` (beside and swap on `_ledger_id`, decision 0801),
and an incremental build finds its new bronze rows by a left join with the NULL-safe
`is not distinct from` (decision 0405). The three steps are what that join decides: the first
build reads all of bronze; the second must pass over every row the first processed and take the
new deliveries (a corrupt newer delivery, a correction, a late parent); the third re-reads rows
inside the lag and must neither process a stored row twice nor miss an older delivery. The later
steps of the story (the late-row window, `--full-refresh`, a rerun, bronze retention) are the same
SQL on every engine and run on DuckDB and PostgreSQL 18 (tests/README.md, "What runs where").
In the test process's shared Spark process.
"""

from __future__ import annotations

import pytest

from tests.integration.test_incremental_dbt import (
    EXPECTED_ENTITY, EXPECTED_MART, EXPECTED_REJECT, EXPECTED_ROUTES, SPEC, STEPS, Bronze, Build, observe,
)
from tests.support import spark

pytestmark = [pytest.mark.slow, pytest.mark.spark]

LABELS = ("load1", "load2", "load3")


@pytest.fixture(scope="module")
def spark_history(tmp_path_factory) -> dict:
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    project = spark.make_spark_project(tmp_path_factory.mktemp("incremental_spark"), SPEC)
    bronze = Bronze()
    out = {}
    for step in STEPS:
        if step.label not in LABELS:
            continue
        assert not step.expire
        bronze.deliver(step.deliveries)
        project.load_bronze(bronze.relations())
        proc = project.dbt("build", *step.inc_args)  # load3 leaves out the loads model (decision 0411)
        out[step.label] = observe(project, Build(proc.returncode, proc.stdout[-5000:]), bronze, True)
        (compiled,) = (project.path / "target" / "compiled").rglob("orders__staged.sql")
        out.setdefault("_settled", {})[step.label] = "assay_settled" in compiled.read_text()
        if proc.returncode:
            break
    yield out
    spark.close_all()


@pytest.mark.parametrize("label", LABELS)
def test_every_row_matches_the_story_by_hand(spark_history, label):
    got = spark_history.get(label)
    assert got is not None and got.returncode == 0, got.log if got else "an earlier build failed"
    assert got.entity == EXPECTED_ENTITY[label]
    assert {k: v[1] for k, v in got.staged.items()} == EXPECTED_ROUTES[label]
    assert got.reject == EXPECTED_REJECT[label]
    assert got.mart == EXPECTED_MART[label]
    # every bronze row once: in the entity, an open reject row, or deduped
    assert set(got.placements.values()) == {1}, got.placements
    assert got.late_open == []


def test_the_loads_the_ledger_holds_are_left_out(spark_history):
    """Decision 0406 on Spark: from the second build on, the ledger step leaves out the loads bronze
    and the ledger hold alike (l1, then l1 and l2), with Spark's own fingerprint and sum; the rows
    above are the story's all the same."""
    assert spark_history.get("_settled") == {"load1": False, "load2": True, "load3": True}

