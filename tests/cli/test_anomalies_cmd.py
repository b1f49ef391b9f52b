"""`assay anomalies` on a real DuckDB warehouse whose mart holds a generated history (no dbt run):
the text and JSON output, ISO dates, and the exit codes (decision 0950): 0 when only earlier runs
are anomalous, 2 when the latest is, 1 without a mart, 3 for an entity the spec does not declare;
a run a blocking check failed in is judged but never learnt from."""

from __future__ import annotations

import datetime as dt
import json
import re

import duckdb
import pytest
from click.testing import CliRunner

from assay.anomalies import synthetic
from assay.anomalies.method import QUARANTINE_RATE, VOLUME
from assay.cli.main import cli
from assay.scaffold import duckdb_profile, write_dbt_skeleton

SPEC = """\
spec_version: 1
entities:
  orders:
    grain: one row per order
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
"""
MAPPING = """\
mapping_version: 1
source: raw_orders
target: orders
key:
  order_id: {from: "$.id"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
# the shape the builds create (the dbt package's check_results_select)
RESULTS = ("create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
           "check_position integer, kind varchar, enforcement varchar, passed boolean, row_count integer, "
           "check_spec varchar, measures varchar, recorded_at timestamp)")
RESULT = ("insert into assay_meta.assay_check_results (run_id, table_name, check_id, check_position, kind, enforcement, "
          "passed, row_count, check_spec, measures, recorded_at) ")


def _setup(tmp_path, history=None):
    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(SPEC)
    (spec / "orders.yml").write_text(MAPPING)
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    if history is not None:
        con.execute("create schema gold")
        synthetic.load_into(con, "gold.mart_data_quality", history)
    con.close()
    return project, spec


def _run(project, spec, *args):
    result = CliRunner().invoke(cli, ["anomalies", *args, "--project", str(project), "--spec", str(spec)])
    assert "Traceback" not in result.output
    return result


def _doc(result) -> dict:
    return json.loads(result.stdout)


# Run 30 is a Wednesday (the history starts on a Monday): three times its usual load. With 4
# Wednesdays before it, it is outside both bands and reported against the nearer, the weekday one.
SPIKE = synthetic.Event(VOLUME, 30, "spike", 3.0)


def test_an_earlier_anomaly_is_listed_and_the_command_exits_0(tmp_path):
    project, spec = _setup(tmp_path, synthetic.generate(50, 4, weekly=True, events=(SPIKE,)))
    res = _run(project, spec)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].split() == ["entity", "measure", "run", "date", "observed", "band", "median", "learnt", "from", "direction"]
    assert re.fullmatch(r"orders +volume +run-0030 +2026-02-04 +[\d,]+ +\[[\d,]+, [\d,]+\] +[\d,]+ +4 Wednesdays +up", lines[1]), lines
    assert lines[-1] == "1 anomaly in the history of 1 entity; the latest runs are inside their bands"

    doc = _doc(_run(project, spec, "--json", "--entity", "orders"))
    (spike,) = doc["anomalies"]
    assert {k: spike[k] for k in ("entity", "measure", "rule", "run_id", "run_date", "run_started_at", "direction",
                                  "latest", "failed_run", "season", "learnt_from")} == {
        "entity": "orders", "measure": "volume", "rule": None, "run_id": "run-0030", "run_date": "2026-02-04",
        "run_started_at": "2026-02-04T06:00:00Z", "direction": "up", "latest": False, "failed_run": False,
        "season": "weekday", "learnt_from": 4}
    low, high = spike["band"]
    assert low < spike["median"] < high < spike["observed"]
    assert doc["not_enough_history"] == [] and doc["runs"] == {"orders": 50}
    assert doc["method"]["min_history"] == 7


def test_the_latest_run_anomalous_exits_2(tmp_path):
    history = synthetic.generate(40, 4, weekly=True, events=(synthetic.Event("status_in_set", 39, "spike", 5.0),))
    project, spec = _setup(tmp_path, history)
    res = _run(project, spec)
    assert res.exit_code == 2, res.output
    assert re.search(r"orders +status_in_set failure_rate +run-0039 +2026-02-13 +[\d.]+% +\[[\d.]+%, [\d.]+%\]", res.stdout)
    assert "the latest run is anomalous: orders status_in_set failure_rate up." in res.stderr
    doc = _doc(_run(project, spec, "--json"))
    assert [(a["measure"], a["rule"], a["latest"]) for a in doc["anomalies"]] == [("failure_rate", "status_in_set", True)]


def test_too_little_history_says_so(tmp_path):
    project, spec = _setup(tmp_path, synthetic.generate(5, 1, weekly=False))
    res = _run(project, spec)
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines() == [
        "orders: not enough history (5 runs recorded; a run is judged once 7 earlier runs can be learnt from)",
        # nothing was judged, so nothing is said to be inside its band (decision 0948)
        "0 anomalies in the history of 1 entity; no latest run was judged: none has enough history yet",
    ]
    doc = _doc(_run(project, spec, "--json"))
    assert {(n["measure"], n["rule"], n["runs"]) for n in doc["not_enough_history"]} >= {("volume", None, 3),
                                                                                          ("quarantine_rate", None, 4)}


def test_a_rate_of_runs_that_evaluated_no_rows_is_not_judged_and_not_for_want_of_history(tmp_path):
    # A source that never loaded: twelve runs, none evaluated a row, so no run has a rate. More
    # history would not help, and the command says why instead of "not enough history" (probe Q6).
    project, spec = _setup(tmp_path, synthetic.generate(12, 1, weekly=False, load=0))
    res = _run(project, spec)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert "orders: quarantine_rate: not judged: its latest run evaluated no rows, so it has no rate" in lines, lines
    assert "orders: rule amount_range: not judged: its latest run evaluated no rows, so it has no rate" in lines, lines
    assert not [line for line in lines if "not enough history" in line], lines
    assert lines[-1] == "0 anomalies in the history of 1 entity; the latest runs are inside their bands", lines
    thin = _doc(_run(project, spec, "--json"))["not_enough_history"]
    assert {(n["measure"], n["rule"], n["reason"]) for n in thin} >= {("quarantine_rate", None, "no rows evaluated"),
                                                                     ("failure_rate", "amount_range", "no rows evaluated")}
    assert "volume" not in {n["measure"] for n in thin}  # loads of 0 rows are a volume, judged


def test_no_mart_exits_1_and_an_unknown_entity_exits_3(tmp_path):
    project, spec = _setup(tmp_path)
    res = _run(project, spec)
    assert res.exit_code == 1
    assert "no quality history yet: gold.mart_data_quality is not in the warehouse of" in res.stderr
    assert "&& dbt build` (every run appends to it)" in res.stderr
    res = _run(project, spec, "--entity", "nope")
    assert res.exit_code == 3 and "no entity 'nope' in the spec in " in res.stderr and "; pass one of orders." in res.stderr


@pytest.mark.parametrize("enforcement,failed", [("required", True), ("block", True), ("advisory", False), ("warn", False)])
def test_a_run_a_blocking_check_failed_in_is_never_learnt_from(tmp_path, enforcement, failed):
    project, spec = _setup(tmp_path, synthetic.generate(30, 2, weekly=False, events=(synthetic.Event(QUARANTINE_RATE, 20, "spike", 9.0),)))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema assay_meta")
    con.execute(RESULTS)
    # recorded when run-0020 ran: the mart holds that run and later ones (no history is behind)
    con.execute(RESULT + "select 'run-0020', 'orders', 'C1', 1, 'null_ceiling', ?, false, 0, null, null, "
                "min(run_started_at) from gold.mart_data_quality where run_id = 'run-0020'", [enforcement])
    con.close()
    doc = _doc(_run(project, spec, "--json"))
    flagged = {(a["measure"], a["run_id"]): a for a in doc["anomalies"]}
    assert flagged[("quarantine_rate", "run-0020")]["failed_run"] is failed
    # an anomalous run and a failed one are both left out of later bands
    assert set(flagged) == {("quarantine_rate", "run-0020")}


def test_the_report_shows_the_anomalies_and_warns_on_the_latest(tmp_path):
    """Issue 20, item 5: `assay report` shows the same anomalies `assay anomalies` lists (the
    earlier spike and the latest run's), and an entity whose latest run is anomalous is a warning
    in the health verdict, with the measure, the observed value and the band."""
    history = synthetic.generate(40, 4, weekly=True, events=(SPIKE, synthetic.Event("status_in_set", 39, "spike", 5.0)))
    project, spec = _setup(tmp_path, history)
    listed = _doc(_run(project, spec, "--json"))["anomalies"]
    report = CliRunner().invoke(cli, ["report", "--json", "--project", str(project), "--spec", str(spec),
                                      "--now", "2026-02-14T00:00:00Z"])
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    shown = data["anomalies"]
    assert [(a["run_id"], a["measure"], a["rule"], a["direction"], a["latest"]) for a in shown["flagged"]] == \
        [(a["run_id"], a["measure"], a["rule"], a["direction"], a["latest"]) for a in listed] == \
        [("run-0030", "volume", None, "up", False), ("run-0039", "failure_rate", "status_in_set", "up", True)]
    (line,) = [l for l in data["health"]["lines"] if l["entity"] == "orders"]
    (said,) = [r for r in line["reasons"] if r.startswith("latest run anomalous: ")]
    assert re.fullmatch(r"latest run anomalous: status_in_set failure_rate up \(observed [\d.]+%, band "
                        r"\[[\d.]+%, [\d.]+%\], learnt from \d+ (runs|Fridays)\)", said), said
    assert line["level"] in ("warn", "fail")
    page = tmp_path / "report.html"
    html = CliRunner().invoke(cli, ["report", "--out", str(page), "--project", str(project), "--spec", str(spec),
                                    "--now", "2026-02-14T00:00:00Z"])
    assert html.exit_code == 0, html.output
    text = page.read_text()
    assert "Anomalies in the quality history" in text and 'class="anomalies"' in text
    assert "status_in_set failure_rate" in text and "up · latest" in text


def test_the_report_runs_no_detector_while_no_run_can_be_judged(tmp_path, monkeypatch):
    """With at most 7 runs per entity nothing can be judged: the report says so per entity from one
    count, without the detector's rounds (on Spark about 20 s each)."""
    from assay.anomalies import history

    project, spec = _setup(tmp_path, synthetic.generate(7, 1, weekly=False))

    def refuse(*args, **kwargs):
        raise AssertionError("the detector ran")

    monkeypatch.setattr(history, "read_verdicts", refuse)
    report = CliRunner().invoke(cli, ["report", "--json", "--project", str(project), "--spec", str(spec)])
    assert report.exit_code == 0, report.output
    shown = json.loads(report.stdout)["anomalies"]
    assert (shown["available"], shown["flagged"], shown["thin"], shown["judged"]) == (True, [], {"orders": 7}, 0)


def test_a_later_build_that_recorded_no_history_is_said_as_the_report_says_it(tmp_path):
    """Decision 0945: the entity's latest build (here the run that last recorded its check results,
    a day after the mart's newest run) recorded no row in mart_data_quality (dbt skipped the mart,
    decision 0942). `assay anomalies` judged an earlier run as the latest: it says so, in text and
    in JSON, with the sentence the report's health line says; the exit code is unchanged. A build
    recorded no later than the mart's newest run is no warning."""
    project, spec = _setup(tmp_path, synthetic.generate(12, 5, weekly=False))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    (newest, started), = con.execute("select run_id, run_started_at from gold.mart_data_quality "
                                     "order by run_started_at desc, run_id desc limit 1").fetchall()
    con.execute("create schema assay_meta")
    con.execute(RESULTS)
    spec_text = json.dumps({"columns": [], "types": [], "bounds": {"min_rows": 1}})
    con.execute(RESULT + "values ('run-late', 'orders', 'C1', 1, 'row_expectation', 'advisory', true, 1, ?, "
                "'{\"rows\": 1}', ? + interval 1 day)", [spec_text, started])
    con.close()
    said = (f"quality history is older than the latest run: its latest build, run run-late, recorded no row in "
            f"mart_data_quality; the latest there is run {newest}")
    res = _run(project, spec)
    assert res.exit_code == 0, res.output
    assert f"orders: {said}" in res.stdout.splitlines(), res.stdout
    doc = _doc(_run(project, spec, "--json"))
    (behind,) = doc["history_behind"]
    assert behind == {"entity": "orders", "run": "run-late", "at": (started + dt.timedelta(days=1)).isoformat() + "Z",
                      "recorded_run": newest, "warning": said}, behind
    report = CliRunner().invoke(cli, ["report", "--json", "--project", str(project), "--spec", str(spec)])
    assert report.exit_code == 0, report.output
    data = json.loads(report.stdout)
    (entity,) = data["entities"]
    assert entity["history_behind"] == {k: behind[k] for k in ("run", "at")}, entity
    (line,) = [l for l in data["health"]["lines"] if l["entity"] == "orders"]
    assert said in line["reasons"], line

    # the results recorded at the newest run's start (the same moment, spelt otherwise), then by
    # the newest run itself: nothing is behind
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("update assay_meta.assay_check_results set recorded_at = ?", [started])
    con.close()
    assert _doc(_run(project, spec, "--json"))["history_behind"] == []
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("update assay_meta.assay_check_results set run_id = ?, recorded_at = ? + interval 1 minute",
                [newest, started])
    con.close()
    assert _doc(_run(project, spec, "--json"))["history_behind"] == []
    assert not any("quality history is older" in line for line in _run(project, spec).stdout.splitlines())


def test_the_default_is_the_specs_entities_not_another_projects_in_a_shared_mart(tmp_path):
    # an outside tester (session 45): two projects built into one mart, and `assay anomalies` of
    # one judged the other's entities
    project, spec = _setup(tmp_path, synthetic.generate(50, 4, weekly=True, events=(SPIKE,)))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    synthetic.insert_rows(con, "gold.mart_data_quality",
                          synthetic.generate(50, 5, weekly=True, events=(SPIKE,), entity="books"))
    con.close()
    doc = _doc(_run(project, spec, "--json"))
    assert doc["runs"] == {"orders": 50}, doc["runs"]
    assert {a["entity"] for a in doc["anomalies"]} == {"orders"}
