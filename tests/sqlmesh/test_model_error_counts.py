"""What `@assay_record_errored_models` finds among the models a run began (decision 1164), without
an engine: the counting of `@assay_model_begins` / `@assay_model_ends` per run id."""

from __future__ import annotations

from types import SimpleNamespace

from sqlglot import exp

from assay_sqlmesh.model_errors import assay_model_begins, assay_model_ends, errored


def evaluator(run: str | None):
    """A macro evaluator of a run with correlation id `run` (None: loading, no engine)."""
    adapter = SimpleNamespace(correlation_id=run)
    return SimpleNamespace(locals={"engine_adapter": adapter} if run is not None else {})


def began(run, table, model, ended: bool = True):
    lit = exp.Literal.string
    assay_model_begins.__wrapped__(evaluator(run), lit(table), lit(model))
    if ended:
        assay_model_ends.__wrapped__(evaluator(run), lit(model))


def test_a_model_that_began_and_did_not_end_is_its_tables_error_and_the_run_is_forgotten():
    began("R1", "shop", "shop__staged")
    began("R1", "shop", "shop__reject")
    began("R1", "shop", "shop", ended=False)
    began("R1", "item", "item__staged")
    began("R2", "item", "item__staged", ended=False)  # another run's model is its own
    assert errored("R1") == [("shop", "shop")]
    assert errored("R1") == []  # forgotten once read
    assert errored("R2") == [("item", "item__staged")]


def test_a_model_evaluated_twice_errs_only_when_one_evaluation_did_not_end():
    began("R3", "meter", "meter__staged")  # created, then filled: two pairs
    began("R3", "meter", "meter__staged")
    assert errored("R3") == []
    began("R4", "meter", "meter__staged")  # two batches, the second failed
    began("R4", "meter", "meter__staged", ended=False)
    assert errored("R4") == [("meter", "meter__staged")]


def test_the_first_model_of_a_table_that_erred_is_named_and_nothing_counts_without_a_run():
    began("R5", "shop", "shop__staged", ended=False)
    began("R5", "shop", "shop__reject", ended=False)
    assert errored("R5") == [("shop", "shop__staged")]
    began(None, "shop", "shop__staged", ended=False)  # loading the project: no run
    assert errored("None") == []


def test_a_run_that_never_reached_after_all_is_recorded_by_the_next_opening_on_its_own_adapter(monkeypatch, capsys):
    """Decision 1166: a failed plan runs no after_all; the next before_all of the process records
    what it left, on the failed plan's adapter (a process may plan several projects), and a
    failure to write is said and stops nothing."""
    from assay_sqlmesh import model_errors

    written = []

    def record(adapter, dialect, schema, run, failed):
        if adapter.correlation_id == "P3":
            raise RuntimeError("the server is gone")
        written.append((adapter.correlation_id, dialect, schema, run, failed))

    monkeypatch.setattr(model_errors, "_record", record)
    monkeypatch.setattr(model_errors, "_OPEN", {})
    first, second, third = (SimpleNamespace(correlation_id=r) for r in ("P1", "P2", "P3"))
    model_errors.opened(first, "duckdb", "meta_a")
    began("P1", "shop", "shop__staged", ended=False)  # the plan fails: no after_all
    model_errors.opened(second, "postgres", "meta_b")
    assert written == [("P1", "duckdb", "meta_a", "P1", [("shop", "shop__staged")])]
    model_errors.opened(third, "duckdb", "meta_c")  # P2 left nothing errored: recorded as nothing
    assert written[-1] == ("P2", "postgres", "meta_b", "P2", [])
    began("P3", "item", "item__staged", ended=False)
    model_errors._record_unfinished()  # the process exits
    assert "could not record that item__staged of P3 errored: the server is gone" in capsys.readouterr().err
    assert model_errors._OPEN == {}
