"""`assay plan --data`: the pure comparison of two builds (plandata/measure.py), its text form, and
the CLI's refusals before any dbt runs (decision 1020). The numbers against real builds are in
tests/integration/test_plan_data_dbt.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project, load_project
from assay.cli.main import cli
from assay.cli.plan_cmd import data_lines
from assay.plandata import DataPlan
from assay.plandata.measure import Snapshot, entity_impact, rules_of
from assay.scaffold import duckdb_profile, write_dbt_skeleton

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


@pytest.fixture(scope="module")
def order():
    return load_project(EXAMPLE).entity("order")


def test_failed_rules_read_as_a_set_from_an_array_or_a_delimited_string():
    assert rules_of(["b", "a"]) == {"a", "b"}
    assert rules_of("a,b") == {"a", "b"}
    assert rules_of("") == set() and rules_of(None) == set()


def test_rows_are_new_to_a_route_only_when_they_did_not_take_it_for_that_rule_before(order):
    before = Snapshot(
        staged={("raw_orders", "1"): ("quarantined", frozenset({"amount_range_min"})),
                ("raw_orders", "2"): ("kept", frozenset()),
                ("raw_orders", "3"): ("kept", frozenset({"amount_range_max"}))},
        open_rejects=frozenset({"r1", "r9"}), open_rules={("raw_orders", "1"): frozenset({"amount_range_min"})},
        built=True)
    after = Snapshot(
        staged={("raw_orders", "1"): ("quarantined", frozenset({"amount_range_min", "status_in_enum"})),
                ("raw_orders", "2"): ("quarantined", frozenset({"amount_range_min"})),
                ("raw_orders", "3"): ("kept", frozenset({"amount_range_max"})),
                ("raw_orders", "4"): ("kept", frozenset({"amount_range_max"})),
                ("raw_orders", "5"): ("deduped", frozenset())},
        routes={"kept": 2, "quarantined": 2, "deduped": 1},
        open_rejects=frozenset({"r1", "r2"}), resolved={"r9": "admitted"}, built=True,
        open_rules={("raw_orders", "1"): frozenset({"amount_range_min", "status_in_enum"}),
                    ("raw_orders", "2"): frozenset({"amount_range_min"})})
    impact = entity_impact(order, before, after)
    rules = impact.as_dict()["rules"]
    assert (rules["amount_range_min"]["quarantined"], rules["amount_range_min"]["newly_quarantined"]) == (2, 1)
    assert (rules["status_in_enum"]["quarantined"], rules["status_in_enum"]["newly_quarantined"]) == (1, 1)
    assert (rules["amount_range_max"]["flagged"], rules["amount_range_max"]["newly_flagged"]) == (2, 1)
    assert impact.newly_quarantined == 1
    assert impact.as_dict()["leave_reject"] == {"admitted": 1, "deduped": 0}
    assert impact.as_dict()["routes"] == {"kept": 2, "quarantined": 2, "failed": 0, "deduped": 1}


def test_a_row_quarantined_before_a_stopped_build_is_not_newly_quarantined_after_it(order):
    # The last build was stopped by a fail rule: its staged relation routes the row `failed`, and
    # its diversion never reached the reject table, where the row is still open from the build
    # before. The rule line agrees with the reject-table line: nothing is newly quarantined.
    row = ("raw_orders", "1")
    before = Snapshot(staged={row: ("failed", frozenset({"amount_range_min", "status_in_enum"}))},
                      open_rejects=frozenset({"r1"}), open_rules={row: frozenset({"amount_range_min"})}, built=True)
    after = Snapshot(staged={row: ("quarantined", frozenset({"amount_range_min"}))},
                     open_rejects=frozenset({"r1"}), open_rules={row: frozenset({"amount_range_min"})}, built=True)
    impact = entity_impact(order, before, after)
    assert impact.newly_quarantined == 0
    rule = impact.as_dict()["rules"]["amount_range_min"]
    assert (rule["quarantined"], rule["newly_quarantined"]) == (1, 0)


def test_a_quarantined_row_whose_reject_row_retention_deleted_is_not_newly_quarantined():
    """An incremental entity's ledger keeps a quarantined delivery after bronze dropped it, and
    `assay maintain` deletes its reject row; the next build does not write it again. The rule line
    said `1 quarantined (1 newly)` beside `0 rows newly quarantined` (an outside tester, session 49).
    Late arrivals have a line of their own, as in the mart (decision 1131)."""
    import dataclasses

    entity = load_project(EXAMPLE).entity("order")
    incremental = dataclasses.replace(entity, materialized="incremental")
    gone, late = ("raw_orders", "7"), ("raw_orders", "8")
    before = Snapshot(staged={gone: ("quarantined", frozenset({"amount_range_min"}))}, built=True)
    after = Snapshot(staged={gone: ("quarantined", frozenset({"amount_range_min"})),
                             late: ("quarantined", frozenset({"_late_arrival"}))},
                     open_rules={late: frozenset({"_late_arrival"})}, open_rejects=frozenset({"r8"}), built=True)
    rules = entity_impact(incremental, before, after).as_dict()["rules"]
    assert (rules["amount_range_min"]["quarantined"], rules["amount_range_min"]["newly_quarantined"]) == (1, 0)
    assert (rules["_late_arrival"]["disposition"], rules["_late_arrival"]["quarantined"],
            rules["_late_arrival"]["newly_quarantined"]) == ("quarantine", 1, 1)
    assert "_late_arrival" not in entity_impact(entity, before, after).as_dict()["rules"]  # a table entity has none


def test_an_entity_the_build_does_not_publish_reports_only_failing_rows(order):
    after = Snapshot(staged={("raw_orders", "1"): ("failed", frozenset({"amount_range_min"}))}, built=True)
    impact = entity_impact(order, Snapshot(), after)
    impact.published = False
    rule = impact.as_dict()["rules"]["amount_range_min"]
    assert (rule["failed"], rule["newly_failed"], rule["quarantined"], rule["flagged"]) == (1, 1, None, None)


def test_the_text_form_names_each_entity_and_each_rule_the_build_touches(order):
    after = Snapshot(staged={("raw_orders", "1"): ("quarantined", frozenset({"amount_range_min"})),
                             ("raw_orders", "2"): ("kept", frozenset({"amount_range_max"}))},
                     routes={"kept": 1, "quarantined": 1}, open_rejects=frozenset({"r1"}), built=True,
                     open_rules={("raw_orders", "1"): frozenset({"amount_range_min"})})
    impact = entity_impact(order, Snapshot(open_rejects=frozenset({"r0"}), built=True),
                           Snapshot(**{**after.__dict__, "resolved": {"r0": "admitted"}}))
    impact.published = True
    impact.replay = {"in_bronze": 0, "redelivered": 2, "superseded": 1, "unrecoverable": 0, "brought_back": 1,
                     "still_quarantined": 1, "deduped": 0, "leave_reject": {"admitted": 3, "deduped": 0}}
    lines = data_lines(DataPlan("duckdb", True, "Done. PASS=3", True, {"order": impact}))
    assert lines == [
        "next build (dbt build, in a copy of the duckdb warehouse): ok (Done. PASS=3)",
        "order: 1 kept, 1 quarantined, 0 failing, 0 deduped",
        "  reject table: 1 row newly quarantined; 1 open row leaves it (1 admitted, 0 deduped)",
        "  amount_range_max (flag): 1 flagged (1 newly)",
        "  amount_range_min (quarantine): 1 quarantined (1 newly)",
        "  replay: would re-deliver 2 rows (1 superseded); the build after it brings back 1 row, 1 stay quarantined, 0 deduped; "
        "in that build 3 open rows leave the reject table (3 admitted, 0 deduped)",
    ]
    # Nothing to re-deliver (every open reject row in bronze): no build after the replay judges anything
    impact.replay = {"in_bronze": 3, "redelivered": 0, "superseded": 0, "unrecoverable": 0, "brought_back": 0,
                     "still_quarantined": 0, "deduped": 0}
    lines = data_lines(DataPlan("duckdb", True, "Done. PASS=3", None, {"order": impact}))
    assert lines[-1] == "  replay: would re-deliver 0 rows (0 superseded); nothing for a build after it to judge"
    # A child re-delivers nothing itself, but the parent's replays bring back rows it still holds in
    # bronze: the text says what `--json`'s leave_reject says (an outside tester, session 40)
    impact.replay = {**impact.replay, "leave_reject": {"admitted": 2, "deduped": 0}}
    lines = data_lines(DataPlan("duckdb", True, "Done. PASS=3", None, {"order": impact}))
    assert lines[-1] == ("  replay: would re-deliver 0 rows (0 superseded); the build after the replays re-judges rows "
                         "still in bronze: 2 open rows leave the reject table (2 admitted, 0 deduped)")


def test_a_failed_sqlmesh_plan_is_not_measured_and_names_what_stopped_it(order):
    impact = entity_impact(order, Snapshot(built=True), Snapshot(built=True))
    impact.published, impact.measured = False, False
    impact.stops = (("silver.order__staged", "assay_fail_rule", "amount_range_max", 2),
                    ("silver.order", "assay_conservation", None, 1))
    lines = data_lines(DataPlan("duckdb", False, "sqlmesh plan: a blocking audit failed", None, {"order": impact},
                                target="sqlmesh"))
    assert lines[1:] == ["order: not measured (the plan failed and SQLMesh applied nothing; NOT published)",
                         "  amount_range_max (fail): 2 rows failed",
                         "  assay_conservation on silver.order: 1 row failed"]
    assert impact.as_dict()["stops"][0] == {"model": "silver.order__staged", "audit": "assay_fail_rule",
                                            "rule": "amount_range_max", "rows": 2}
    assert "routes" not in impact.as_dict()


def _project(tmp_path: Path, build: bool = False) -> Path:
    proj = tmp_path / "proj"
    write_dbt_skeleton(proj, "shop", duckdb_profile("shop", str(tmp_path / "warehouse.duckdb")))
    assert not generate_dbt_project(EXAMPLE, proj).report.conflicts
    if build:  # a warehouse file that no build has written to
        import duckdb

        duckdb.connect(str(tmp_path / "warehouse.duckdb")).close()
    return proj


def _plan(proj: Path, *extra: str):
    return CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--spec", str(EXAMPLE), "--project", str(proj), "--data", *extra])


def test_no_warehouse_yet_is_a_clear_error(tmp_path):
    res = _plan(_project(tmp_path))
    assert res.exit_code == 1, res.output
    assert "does not exist: nothing has been built yet" in res.output and "Traceback" not in res.output


def test_a_warehouse_no_build_wrote_is_a_clear_error(tmp_path):
    res = _plan(_project(tmp_path, build=True), "--json")
    assert res.exit_code == 1, res.output
    assert "nothing to compare with: the warehouse holds no silver.customer__staged" in res.output
    assert "Traceback" not in res.output


def test_the_warehouse_options_need_data(tmp_path):
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--spec", str(EXAMPLE), "--target", "dev"])
    assert res.exit_code == 3 and "add --data" in res.output


def test_a_sqlmesh_project_whose_gateway_cannot_be_copied_is_refused_with_the_reason(tmp_path):
    proj = tmp_path / "lake"
    proj.mkdir()
    (proj / "config.yaml").write_text("gateways:\n  local:\n    connection:\n      type: duckdb\n      catalogs:\n"
                                      "        warehouse: w.duckdb\ndefault_gateway: local\nmodel_defaults:\n  dialect: duckdb\n")
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--spec", str(EXAMPLE), "--project", str(proj), "--data"])
    assert res.exit_code == 1 and "is not one (decision 1020)" in res.output and "Traceback" not in res.output, res.output


def test_profiles_dir_is_refused_on_a_sqlmesh_project(tmp_path):
    proj = tmp_path / "lake"
    proj.mkdir()
    (proj / "config.yaml").write_text("gateways:\n  local:\n    connection:\n      type: duckdb\n      database: w.duckdb\n"
                                      "default_gateway: local\nmodel_defaults:\n  dialect: duckdb\n")
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--spec", str(EXAMPLE), "--project", str(proj), "--data",
                                   "--profiles-dir", str(tmp_path)])
    assert res.exit_code == 3 and "--profiles-dir (a dbt option) does not apply" in res.output, res.output


def test_execution_time_is_a_sqlmesh_plans(tmp_path):
    res = _plan(_project(tmp_path, build=True), "--execution-time", "2026-03-01")
    assert res.exit_code == 3 and "--execution-time is the time of a SQLMesh plan" in res.output, res.output


def test_without_data_the_json_has_no_data_part(tmp_path):
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), "--spec", str(EXAMPLE), "--json"])
    assert res.exit_code == 0 and "data" not in json.loads(res.stdout)


def test_the_sandbox_copy_keeps_packages_relinked_and_leaves_out_builds(tmp_path):
    from assay.plandata.sandbox import _copy_project

    proj = tmp_path / "proj"
    (proj / "assay_packages" / "assay").mkdir(parents=True)
    (proj / "dbt_packages").mkdir()
    (proj / "dbt_packages" / "assay").symlink_to(proj / "assay_packages" / "assay", target_is_directory=True)
    (proj / "target").mkdir()
    (proj / "target" / "manifest.json").write_text("{}")
    (proj / "target" / "run_results.json").write_text("{}")
    (proj / "warehouse.duckdb").write_bytes(b"x")
    (proj / "dbt_project.yml").write_text("name: x\n")
    _copy_project(proj, tmp_path / "copy")
    copy = tmp_path / "copy"
    assert (copy / "dbt_packages" / "assay").resolve() == (copy / "assay_packages" / "assay").resolve()
    assert (proj / "dbt_packages" / "assay").resolve() == (proj / "assay_packages" / "assay").resolve()
    assert sorted(p.name for p in (copy / "target").iterdir()) == ["manifest.json"]
    assert not (copy / "warehouse.duckdb").exists() and (copy / "dbt_project.yml").exists()


def test_a_sqlmesh_run_with_nothing_due_is_no_audit_failure(tmp_path, monkeypatch):
    """SQLMesh answers NOTHING_TO_DO (its is_success false) when no interval is due at the tick: after
    the plan that is a passed build; after the replays nothing judged the replayed rows, so the
    plan says so instead of reporting a failed audit."""
    import datetime as dt

    from sqlmesh.core.context import CompletionStatus

    from assay.errors import ProjectError
    from assay.plandata.steps import SqlmeshSteps

    class Ctx:
        def __init__(self, status):
            self.status = status

        def plan(self, **kwargs):
            return None

        def run(self, execution_time, end):
            assert end == execution_time  # up to the tick, not the wall clock
            return self.status

    steps = SqlmeshSteps(dt.datetime(2026, 12, 9, 0, 30), "duckdb")
    monkeypatch.setattr(steps, "_tick", lambda path: dt.datetime(2026, 12, 10))
    for status, ok in ((CompletionStatus.NOTHING_TO_DO, True), (CompletionStatus.SUCCESS, True), (CompletionStatus.FAILURE, False)):
        monkeypatch.setattr(steps, "_context", lambda path, work, s=status: work(Ctx(s)))
        assert steps.build(tmp_path).ok is ok, status
    monkeypatch.setattr(steps, "_context", lambda path, work: work(Ctx(CompletionStatus.NOTHING_TO_DO)))
    with pytest.raises(ProjectError, match="had nothing to do at 2026-12-10 00:00"):
        steps.rebuild(tmp_path)
    monkeypatch.setattr(steps, "_context", lambda path, work: work(Ctx(CompletionStatus.FAILURE)))
    assert steps.rebuild(tmp_path).ok is False


def test_a_build_that_cannot_run_prints_no_quoted_value_of_a_private_spec(tmp_path):
    """An outside tester (session 36): `plan --data` printed dbt's error for a next build a cast
    stopped, and the engine's message quotes the value (a pii field's); `assay report` hides it.
    For a spec with pii fields or redactions dbt's own lines are kept and of the engine's message
    only its kind (decision 1145)."""
    import subprocess

    from assay.errors import ProjectError
    from assay.plandata.steps import DbtSteps
    from assay.privacy import MESSAGE_WITHHELD

    said = ("Completed with 1 error, 0 partial successes, and 0 warnings:\n"
            "  Runtime Error in model member__staged (models/assay/member/member__staged.sql)\n"
            '  Conversion Error: invalid date field format: "SECRET-dob-bad", expected format is (YYYY-MM-DD)\n'
            "  Could not convert string 'SECRET-2' to INT32\n")

    def dbt(path, *args):
        return subprocess.CompletedProcess(["dbt", *args], 1, said, "")

    with pytest.raises(ProjectError) as private:
        DbtSteps(dbt, private=True).build(tmp_path)
    assert "SECRET" not in str(private.value)
    assert f"Conversion Error ({MESSAGE_WITHHELD})" in str(private.value)
    assert "Runtime Error in model member__staged (models/assay/member/member__staged.sql)" in str(private.value)
    with pytest.raises(ProjectError) as public:
        DbtSteps(dbt).build(tmp_path)
    assert '"SECRET-dob-bad"' in str(public.value)
