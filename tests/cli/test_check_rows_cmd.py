"""`assay check rows RUN CHECK` (decision 0532): the rows a failing check found, read from
<meta>.assay_check_rows; exit 0 when printed (or when a recorded check has none, saying why),
1 for an unknown run or check (with --json, `[]` on stdout), 3 for a usage error. The warehouse is
written by hand here; the end-to-end path (a real build capturing the rows) is tests/integration/test_check_budget_dbt.py."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.scaffold import duckdb_profile, write_dbt_skeleton

RUN = "4f1c2a9e-0000-4000-8000-000000000001"


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def built_results_node(project: Path, schema: str = "assay_meta", name: str = "shop") -> None:
    """The target/manifest.json a dbt build leaves: its `assay_check_results` node built into
    `schema`, which is where assay reads results without a spec (decision 0913)."""
    node = {"resource_type": "model", "package_name": name, "name": "assay_check_results", "schema": schema,
            "config": {"schema": schema}}
    (project / "target").mkdir(parents=True, exist_ok=True)
    (project / "target" / "manifest.json").write_text(json.dumps(
        {"metadata": {"project_name": name}, "nodes": {f"model.{name}.assay_check_results": node}}), encoding="utf-8")


def results_warehouse(tmp_path: Path) -> tuple[Path, "duckdb.DuckDBPyConnection"]:
    """A dbt project on DuckDB, built (its manifest names the results node), whose warehouse holds
    assay_meta's empty results and rows tables, and an open connection to fill them (the caller
    closes it)."""
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema assay_meta")
    con.execute(
        "create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
        "check_position int, kind varchar, enforcement varchar, passed boolean, row_count int, check_spec varchar, "
        "measures varchar, recorded_at timestamp)")
    con.execute("create table assay_meta.assay_check_rows (run_id varchar, table_name varchar, check_id varchar, "
                "row_number int, row_json varchar)")
    return project, con


def range_failed(tmp_path: Path, outside: int):
    """A warehouse whose run RUN recorded RANGE (a required value range over `qty`) failing with
    `outside` of 3 values outside it, and no kept row; the connection is left open to add rows."""
    project, con = results_warehouse(tmp_path)
    spec = json.dumps({"columns": ["qty"], "types": ["int"], "bounds": {"min_value": "0", "max_value": "10"},
                       "orderable": True})
    con.execute("insert into assay_meta.assay_check_results values "
                "(?, 'order', 'RANGE', 1, 'value_range', 'required', false, 3, ?, ?, '2026-12-01 10:00:00')",
                [RUN, spec, json.dumps({"rows": 3, "values": 3, "outside": outside, "first": "11"})])
    return project, con


@pytest.fixture
def recorded(tmp_path) -> Path:
    """One run: RANGE failed with two kept rows, ROWS passed, KEY was not evaluated (over budget)."""
    project, con = results_warehouse(tmp_path)
    at = "2026-12-01 10:00:00"
    range_spec = json.dumps({"columns": ["qty"], "types": ["int"], "bounds": {"min_value": "0", "max_value": "10"},
                             "orderable": True})
    con.execute(
        "insert into assay_meta.assay_check_results values "
        "(?, 'order', 'RANGE', 1, 'value_range', 'advisory', false, 3, ?, ?, ?),"
        "(?, 'order', 'ROWS', 2, 'row_expectation', 'required', true, 3, ?, '{\"rows\": 3}', ?),"
        "(?, 'order', 'KEY', 3, 'key_uniqueness', 'required', false, 3, ?, ?, ?)",
        [RUN, range_spec, json.dumps({"rows": 3, "values": 3, "outside": 2, "first": "11"}), at,
         RUN, json.dumps({"columns": [], "types": [], "bounds": {"min_rows": 1}}), at,
         RUN, json.dumps({"columns": ["order_id"], "types": ["string"], "bounds": {}}),
         json.dumps({"rows": 3, "not_evaluated": {"code": "CHECK_SCAN_BUDGET_EXCEEDED", "estimated_bytes": 144,
                                                  "ceiling_bytes": 10}}), at])
    con.execute("insert into assay_meta.assay_check_rows values "
                "(?, 'order', 'RANGE', 2, '{\"order_id\": \"O-2\", \"qty\": 12}'), "
                "(?, 'order', 'RANGE', 1, '{\"order_id\": \"O-1\", \"qty\": 11}')", [RUN, RUN])
    con.close()
    return project


def test_rows_of_a_failing_check_exit_0(recorded):
    result = invoke("check", "rows", RUN[:8], "range", "--project", str(recorded))
    assert result.exit_code == 0, result.output
    assert result.stdout == ('order: RANGE #1: {"order_id": "O-1", "qty": 11}\n'
                             'order: RANGE #2: {"order_id": "O-2", "qty": 12}\n')
    # no spec here (a project written by hand): the values are the engine's own, and it says so
    assert result.stderr == ("values are shown as the engine wrote them: no spec was given or recorded, so their "
                             "column types are unknown (pass --spec to spell them as `assay checks` does)\n")
    as_json = invoke("check", "rows", RUN, "RANGE", "--json", "--limit", "1", "--project", str(recorded))
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout) == [{"table": "order", "check_id": "RANGE", "row_number": 1,
                                           "row": {"order_id": "O-1", "qty": 11}}]


def test_a_recorded_check_without_rows_says_why(recorded):
    passed = invoke("check", "rows", RUN, "ROWS", "--json", "--project", str(recorded))
    assert passed.exit_code == 0 and json.loads(passed.stdout) == []
    assert passed.stderr == "order: ROWS: no rows: it passed: row count 3 satisfies the declared minimum of 1\n"
    skipped = invoke("check", "rows", RUN, "KEY", "--project", str(recorded))
    assert skipped.exit_code == 0 and skipped.stdout == ""
    assert skipped.stderr == ("order: KEY: no rows: it was not evaluated: not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: "
                              "estimated scan of 144 bytes exceeds the 10-byte ceiling\n")


def test_a_warned_sql_check_whose_rows_were_not_kept_does_not_say_it_passed(tmp_path):
    """An outside tester's repro (session 33, dbt on DuckDB and PostgreSQL 15 alike): a SQL check file
    on `warn` returned 2 rows and kept none (decision 0914); `check rows` said `no rows: it passed`."""
    project, con = results_warehouse(tmp_path)
    con.execute("insert into assay_meta.assay_check_results values "
                "(?, 'order', 'silver.order/paid_orders', 1002, 'sql', 'warn', true, 2, ?, ?, '2026-12-01 10:00:00')",
                [RUN, json.dumps({"bounds": {"on_failure": "warn"}, "columns": [], "types": []}),
                 json.dumps({"failing_rows": 2, "rows": 2})])
    con.close()
    res = invoke("check", "rows", RUN, "silver.order/paid_orders", "--project", str(project))
    assert res.exit_code == 0 and res.stdout == "", res.output
    assert "it passed" not in res.stderr
    assert res.stderr.startswith("order: silver.order/paid_orders: no rows: it warned, but none of the rows it "
                                 "returned were kept"), res.stderr
    assert res.stderr.rstrip().endswith("returned 2 rows (warned)"), res.stderr


def test_a_failed_check_whose_rows_were_not_kept_says_it_found_some(tmp_path):
    """Session 34, following docs/checks.md: after `dbt build --vars '{assay_check_rows_kept: 0}'` a
    value_range check that found 2 rows outside its range kept none, and `check rows` said `no rows
    were kept for it (a row count, an unreadable table, or a check with no rows to show)`: none of
    which it was. It says how many rows the check found and why none are shown."""
    project, con = range_failed(tmp_path, outside=2)
    con.close()
    res = invoke("check", "rows", RUN, "range", "--project", str(project))
    assert res.exit_code == 0 and res.stdout == "", res.output
    assert "order: RANGE: no rows: it found 2 failing rows, and none were kept (`assay_check_rows_kept: 0` keeps none" \
        in res.stderr, res.stderr


def test_check_list_counts_the_rows_of_a_failed_declared_check(recorded):
    """Decision 1121: `rows` is what the check found failing (RANGE: 2 values outside its range), `kept`
    what `assay check rows` prints; a check that counts no rows (a row count) or was not evaluated
    leaves `rows` empty."""
    listed = invoke("check", "list", "--json", "--project", str(recorded))
    assert listed.exit_code == 0, listed.output
    counted = {i["check"]: (i["outcome"], i["rows"], i["kept"]) for i in json.loads(listed.stdout)}
    assert counted == {"RANGE": ("warned", 2, 2), "ROWS": ("passed", None, 0), "KEY": ("not_evaluated", None, 0)}
    text = invoke("check", "list", "--project", str(recorded)).stdout.splitlines()
    assert text[0].split() == ["run", "table", "check", "outcome", "rows", "kept", "on_failure", "finished_at"]
    [range_line] = [line for line in text if " RANGE " in line]
    assert range_line.split()[1:7] == ["order", "RANGE", "warned", "2", "2", "advisory"], range_line
    assert len(json.loads(invoke("check", "rows", RUN, "RANGE", "--json", "--project", str(recorded)).stdout)) == 2


def test_rows_counts_every_failing_row_kept_only_what_the_build_kept(tmp_path):
    """A key that repeats on 250 rows, of which the build kept 100 (its cap): rows 250, kept 100; a
    passed key check found no failing row (0); a null ceiling that failed counts its null rows."""
    project, con = results_warehouse(tmp_path)
    key = json.dumps({"columns": ["id"], "types": ["string"], "bounds": {}})
    nulls = json.dumps({"columns": ["v"], "types": ["int"], "bounds": {"max_null_ppm": 0}})
    con.execute("insert into assay_meta.assay_check_results values "
                "('r1', 'ship', 'SHIP_GRAIN', 1, 'key_uniqueness', 'required', false, 300, ?, ?, '2026-12-01 10:00:00'),"
                "('r1', 'ship', 'V_PRESENT', 2, 'null_ceiling', 'advisory', false, 300, ?, ?, '2026-12-01 10:00:00'),"
                "('r0', 'ship', 'SHIP_GRAIN', 1, 'key_uniqueness', 'required', true, 300, ?, ?, '2026-12-01 09:00:00')",
                [key, json.dumps({"rows": 300, "repeats": 250, "key": ["S-1"]}),
                 nulls, json.dumps({"rows": 300, "nulls": 3}),
                 key, json.dumps({"rows": 300, "repeats": 0})])
    con.executemany("insert into assay_meta.assay_check_rows values ('r1', 'ship', 'SHIP_GRAIN', ?, '{}')",
                    [[n] for n in range(1, 101)])
    con.close()
    listed = json.loads(invoke("check", "list", "--json", "--project", str(project)).stdout)
    assert [(i["run"], i["check"], i["outcome"], i["rows"], i["kept"]) for i in listed] == [
        ("r1", "V_PRESENT", "warned", 3, 0), ("r1", "SHIP_GRAIN", "FAILED", 250, 100), ("r0", "SHIP_GRAIN", "passed", 0, 0)]


def test_unknown_run_exit_1_with_a_sentence(recorded):
    result = invoke("check", "rows", "no-such-run", "RANGE", "--project", str(recorded))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "no check results are recorded for run no-such-run; check the run id" in result.stderr


def test_unknown_check_exit_1_names_the_checks_of_the_run(recorded):
    result = invoke("check", "rows", RUN, "nope", "--project", str(recorded))
    assert result.exit_code == 1
    assert f"run {RUN} recorded no check nope; its checks are KEY, RANGE, ROWS." in result.stderr


def test_no_recorded_results_exit_1(tmp_path):
    project = tmp_path / "empty"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    duckdb.connect(str(project / "warehouse.duckdb")).close()
    result = invoke("check", "rows", RUN, "RANGE", "--project", str(project))
    assert result.exit_code == 1
    assert "no check results are recorded for run" in result.stderr


@pytest.mark.parametrize("args, says", [
    (["check", "rows"], "Missing argument 'RUN'"),
    (["check", "rows", RUN], "Missing argument 'CHECK'"),
    (["check", "rows", RUN, "RANGE", "--limit", "0"], "Invalid value for '--limit'"),
    (["check", "rows", RUN, "RANGE", "--limit", "many"], "Invalid value for '--limit'"),
    (["check", "rows", RUN, "RANGE", "--no-such-option"], "No such option '--no-such-option'"),
])
def test_usage_errors_exit_3(args, says):
    result = invoke(*args)
    assert result.exit_code == 3, result.output
    assert says in result.stderr
    assert result.stdout == ""


def test_checks_print_a_not_evaluated_result_with_its_prefix_once(recorded):
    text = invoke("checks", RUN, "--project", str(recorded))
    assert text.exit_code == 2  # passed is false (000): the run's checks did not all pass
    assert ("order: KEY: not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: estimated scan of 144 bytes exceeds the "
            "10-byte ceiling") in text.stdout.splitlines()
    wire = {r["check_id"]: r for r in json.loads(invoke("checks", RUN, "--json", "--project", str(recorded)).stdout)}
    assert wire["KEY"] == {"check_id": "KEY", "passed": False, "scope": "order", "detail": "not_evaluated: CHECK_SCAN_BUDGET_EXCEEDED: "
                           "estimated scan of 144 bytes exceeds the 10-byte ceiling"}
    listed = json.loads(invoke("check", "list", "--json", "--project", str(recorded)).stdout)
    assert {i["check"]: i["outcome"] for i in listed} == {"RANGE": "warned", "ROWS": "passed", "KEY": "not_evaluated"}


@pytest.mark.parametrize("args", [("checks", RUN[:8]), ("check", "list"), ("check", "rows", RUN[:8], "range"),
                                  ("checks", "nope")])
def test_each_checks_command_opens_one_connection_and_closes_it(recorded, monkeypatch, args):
    """Issue 19: the commands stand on the operator core, one connection per command (`check rows`
    used to connect three times), closed when the command ends, also when it fails."""
    from assay.runtime import warehouse

    opened = []
    real = warehouse.connect

    def counting(*a, **k):
        conn, dialect = real(*a, **k)
        opened.append(conn)
        return conn, dialect

    monkeypatch.setattr(warehouse, "connect", counting)
    result = invoke(*args, "--project", str(recorded))
    assert result.exit_code in (0, 1, 2), result.output
    assert len(opened) == 1
    with pytest.raises(duckdb.ConnectionException):
        opened[0].execute("select 1")


def test_a_rate_check_says_where_the_rows_it_counted_are(tmp_path):
    """A rate threshold (docs/thresholds.md) keeps no rows of its own: `check rows` names where the
    rows it counted are, for each of the three kinds, instead of the generic sentence."""
    project, con = results_warehouse(tmp_path)
    spec = json.dumps({"columns": [], "types": [], "bounds": {"max_rate": "0.3", "min_rows": 0}})
    for position, (check_id, kind, failing) in enumerate(
            [("QUARANTINE_RATE", "quarantine_rate", 4), ("FLAG_RATE", "flag_rate", 3), ("QTY_RANGE_RATE", "rule_rate", 1)]):
        con.execute("insert into assay_meta.assay_check_results values (?, 'order', ?, ?, ?, 'advisory', ?, 5, ?, ?, ?)",
                    [RUN, check_id, position, kind, failing <= 2, spec,
                     json.dumps({"evaluated": 9, "failing": failing, "rows": 5}), "2026-12-01 10:00:00"])
    con.close()
    said = {}
    for check_id in ("quarantine_rate", "FLAG_RATE", "qty_range_rate"):
        result = invoke("check", "rows", RUN[:8], check_id, "--project", str(project))
        assert result.exit_code == 0 and result.stdout == "", result.output
        said[check_id.upper()] = result.stderr
    assert said["QUARANTINE_RATE"].startswith(
        "order: QUARANTINE_RATE: no rows: a threshold keeps no rows of its own; they are the rows of order__reject "
        "this run quarantined (assay report shows examples of each rule): quarantined 4 of 9 evaluated rows")
    assert "they are the rows of order whose _quality_flags is not empty" in said["FLAG_RATE"]
    assert ("they carry the rule: in order__reject when it quarantines, in order's _quality_flags when it flags"
            in said["QTY_RANGE_RATE"])


def test_a_change_limit_says_where_the_rows_it_counted_are(tmp_path):
    """A change limit (docs/thresholds.md, max_increase / max_volume_change) keeps no rows either."""
    project, con = results_warehouse(tmp_path)
    for position, (check_id, kind, bounds, measures) in enumerate([
            ("QTY_RANGE_INCREASE", "rule_increase", {"factor": "2", "floor": 1, "rule": "qty_range"},
             {"failing": 9, "previous_failing": 2, "previous_run": "r0"}),
            ("VOLUME_CHANGE", "volume_change", {"factor": "3", "floor": 10},
             {"bronze": 300, "previous_bronze": 100, "earlier_bronze": 50, "previous_run": "r1", "earlier_run": "r0"})]):
        con.execute("insert into assay_meta.assay_check_results values (?, 'order', ?, ?, ?, 'advisory', false, 5, ?, ?, ?)",
                    [RUN, check_id, position, kind, json.dumps({"columns": [], "types": [], "bounds": bounds}),
                     json.dumps(measures), "2026-12-01 10:00:00"])
    con.close()
    rule = invoke("check", "rows", RUN[:8], "qty_range_increase", "--project", str(project))
    assert rule.exit_code == 0 and rule.stdout == "", rule.output
    assert rule.stderr.startswith("order: QTY_RANGE_INCREASE: no rows: a threshold keeps no rows of its own; they carry "
                                  "the rule: in order__reject when it quarantines, in order's _quality_flags when it flags")
    volume = invoke("check", "rows", RUN[:8], "volume_change", "--project", str(project))
    assert volume.exit_code == 0, volume.output
    assert volume.stderr.startswith("order: VOLUME_CHANGE: no rows: a volume check counts the rows a load brought and "
                                    "keeps none (assay report shows the rows per run): ")


def test_an_anomaly_check_says_where_the_rows_it_counted_are(tmp_path):
    """An anomaly check (docs/anomalies.md) keeps no rows either: `check rows` names where the rows
    of its measure are, as for the threshold of the same measure (an outside tester got the generic
    sentence for a rule's failure rate)."""
    project, con = results_warehouse(tmp_path)
    measures = {"history": 9, "learnt_from": 9, "observed": "0.5", "low": "0.0", "high": "0.1", "median": "0.05",
                "season": "all", "run_date": "2026-12-01", "evaluated": 10, "failing": 5, "rows": 0}
    for position, (check_id, metric, rule) in enumerate([("VOLUME_ANOMALY", "volume", None),
                                                         ("QUARANTINE_RATE_ANOMALY", "quarantine_rate", None),
                                                         ("TEMP_NOT_NULL_ANOMALY", "failure_rate", "temp_not_null")]):
        bounds = {"metric": metric, "min_history": 3, **({"rule": rule} if rule else {})}
        con.execute("insert into assay_meta.assay_check_results values (?, 'order', ?, ?, 'anomaly', 'advisory', false, 0, ?, ?, ?)",
                    [RUN, check_id, position, json.dumps({"columns": [], "types": [], "bounds": bounds}),
                     json.dumps(measures), "2026-12-01 10:00:00"])
    con.close()
    said = {}
    for check_id in ("VOLUME_ANOMALY", "QUARANTINE_RATE_ANOMALY", "TEMP_NOT_NULL_ANOMALY"):
        result = invoke("check", "rows", RUN[:8], check_id, "--project", str(project))
        assert result.exit_code == 0 and result.stdout == "", result.output
        said[check_id] = result.stderr
    assert said["VOLUME_ANOMALY"].startswith("order: VOLUME_ANOMALY: no rows: a volume check counts the rows a load "
                                             "brought and keeps none (assay report shows the rows per run): ")
    assert said["QUARANTINE_RATE_ANOMALY"].startswith(
        "order: QUARANTINE_RATE_ANOMALY: no rows: an anomaly check keeps no rows of its own; they are the rows of "
        "order__reject this run quarantined")
    assert said["TEMP_NOT_NULL_ANOMALY"].startswith(
        "order: TEMP_NOT_NULL_ANOMALY: no rows: an anomaly check keeps no rows of its own; they carry the rule: in "
        "order__reject when it quarantines, in order's _quality_flags when it flags"), said


@pytest.mark.parametrize("args", [
    ["checks", "no-such-run"],
    ["check", "rows", "no-such-run", "RANGE"],
    ["check", "rows", RUN, "nope"],
], ids=["checks-unknown-run", "rows-unknown-run", "rows-unknown-check"])
def test_a_json_lookup_that_finds_nothing_prints_an_empty_list_and_exits_1(recorded, args):
    """With --json, a run or check the warehouse did not record is an empty result, valid JSON on
    stdout, and exit 1 with the sentence on stderr, the same for `assay checks` and `assay check rows`
    (decision 0973); a usage error (exit 3) prints nothing on stdout."""
    result = invoke(*args, "--json", "--project", str(recorded))
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout) == []
    assert result.stderr.startswith("Error: ") and ("no check results are recorded" in result.stderr
                                                    or "recorded no check nope" in result.stderr)


def test_rows_cut_by_the_kept_limit_say_so(tmp_path):
    """An outside tester (session 40) built with `assay_check_rows_kept: 1`: `check rows` printed the
    one kept row of three failing and said nothing, as if it were all there was."""
    project, con = range_failed(tmp_path, outside=3)
    con.execute("insert into assay_meta.assay_check_rows values (?, 'order', 'RANGE', 1, '{\"order_id\": \"O-1\", \"qty\": 11}')",
                [RUN])
    con.close()
    res = invoke("check", "rows", RUN, "range", "--project", str(project))
    assert res.exit_code == 0 and res.stdout == 'order: RANGE #1: {"order_id": "O-1", "qty": 11}\n', res.output
    assert "order: RANGE: 1 of the 3 failing rows it found was kept (a build keeps at most 100 rows per check; on dbt " \
        "the var `assay_check_rows_kept` sets another number)" in res.stderr, res.stderr


def test_a_sql_check_whose_rows_were_all_kept_says_nothing_of_a_cut(tmp_path):
    """An outside tester (session 41): a SQL check file's two kept rows were printed, then "0 of the
    2 failing rows it found were kept": the kept rows name the check by its path, the result by its id."""
    project, con = results_warehouse(tmp_path)
    con.execute("insert into assay_meta.assay_check_results values "
                "(?, 'order', 'silver.order/paid_orders', 1002, 'sql', 'warn', true, 2, ?, ?, '2026-12-01 10:00:00')",
                [RUN, json.dumps({"bounds": {"on_failure": "warn"}, "columns": [], "types": []}),
                 json.dumps({"failing_rows": 2, "rows": 2})])
    for n, order in ((1, "O-1"), (2, "O-2")):
        con.execute("insert into assay_meta.assay_check_rows values (?, 'order', 'silver.order/paid_orders', ?, ?)",
                    [RUN, n, json.dumps({"order_id": order})])
    con.close()
    res = invoke("check", "rows", RUN, "silver.order/paid_orders", "--project", str(project))
    assert res.exit_code == 0 and len(res.stdout.splitlines()) == 2, res.output
    assert "were kept" not in res.stderr and "was kept" not in res.stderr, res.stderr

