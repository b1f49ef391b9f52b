"""One result per check and run however often SQLMesh evaluates a model in it (000, 002): an
outside tester (session 49) saw a development run that evaluated an entity in two batches record
every check, and its kept rows, twice. The recorders replace what an earlier evaluation of the
same run recorded; tested on a real DuckDB engine adapter."""

from __future__ import annotations

from sqlmesh.core.engine_adapter import DuckDBEngineAdapter

from assay_sqlmesh.recorded_once import replace_earlier


def _adapter(tmp_path):
    import duckdb

    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    adapter = DuckDBEngineAdapter(lambda: con, dialect="duckdb")
    adapter.execute("create schema meta")
    adapter.execute("create table meta.assay_check_results (run_id text, table_name text, check_id text, passed boolean)")
    adapter.execute("create table meta.assay_check_rows (run_id text, table_name text, check_id text, row_number int, "
                    "row_json text)")
    return adapter


def _record(adapter, run: str, passed: bool, checks=("NOTE_NULLS", "QTY_BOUNDS")):
    replace_earlier(adapter, "duckdb", "meta.assay_check_results", run, "movement", list(checks))
    for check in checks:
        adapter.execute(f"insert into meta.assay_check_results values ('{run}', 'movement', '{check}', {passed})")
        adapter.execute(f"insert into meta.assay_check_rows values ('{run}', 'movement', '{check}', 1, '{{}}')")


def test_a_second_evaluation_in_one_run_replaces_the_first_ones_results_and_rows(tmp_path):
    adapter = _adapter(tmp_path)
    _record(adapter, "SQLMESH_RUN: r1", False)
    _record(adapter, "SQLMESH_RUN: r2", True)  # another run: its own results
    _record(adapter, "SQLMESH_RUN: r1", True)  # the same run again: the last evaluation's stand
    got = adapter.fetchall("select run_id, check_id, passed from meta.assay_check_results order by 1, 2")
    assert got == [("SQLMESH_RUN: r1", "NOTE_NULLS", True), ("SQLMESH_RUN: r1", "QTY_BOUNDS", True),
                   ("SQLMESH_RUN: r2", "NOTE_NULLS", True), ("SQLMESH_RUN: r2", "QTY_BOUNDS", True)]
    assert adapter.fetchone("select count(*) from meta.assay_check_rows")[0] == 4


def test_another_table_or_check_of_the_run_is_left_alone(tmp_path):
    adapter = _adapter(tmp_path)
    _record(adapter, "SQLMESH_RUN: r3", False, checks=("NOTE_NULLS",))
    _record(adapter, "SQLMESH_RUN: r3", False, checks=("QTY_BOUNDS",))  # a SQL check file's recorder
    replace_earlier(adapter, "duckdb", "meta.assay_check_results", "SQLMESH_RUN: r3", "product", ["NOTE_NULLS"])
    assert adapter.fetchone("select count(*) from meta.assay_check_results where run_id = 'SQLMESH_RUN: r3'")[0] == 2
