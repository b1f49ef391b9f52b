"""`assay explain` of a key whose only trace is its reject row (an outside tester, session 40):
bronze dropped the delivery after the build quarantined it, so no staged row names it, yet the
reject table keeps it open, and it is exactly the row an operator reads before `assay replay`.
explain found nothing and exited 1 ("not in item's bronze or reject rows"); it now reads the
reject table by the row's key (`key_values`) or `_source_row_id`. A real `dbt build` on DuckDB,
twice: i2 is quarantined by the range rule, then bronze holds another load only."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.dbtproject import make_project
from tests.support.items import ENTITY, MAPPING, fill, one_load, write_spec

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dropped(tmp_path_factory):
    root = tmp_path_factory.mktemp("explain_dropped")
    spec = write_spec(root, fill(ENTITY, thresholds="", expr_limit="", checks="", expr_fail="flag"),
                      fill(MAPPING, range_limit=""))
    project = make_project(root / "project", spec)
    project.load_bronze([one_load("l1", [("a", "1"), ("b", "-1")])])
    project.dbt("build", check=True)
    project.load_bronze([one_load("l2", [("a", "1")])])  # bronze dropped l1: i2's row is gone
    project.dbt("build", check=True)
    assert project.query("select _source_row_id, resolved_at is null from silver.item__reject") == [("l1-2", True)]

    def explain(*args, spec=spec):
        return CliRunner().invoke(cli, ["explain", "item", *args, "--project", str(project.path), "--spec", str(spec)])
    explain.root = root
    return explain


def test_a_key_bronze_dropped_is_explained_by_its_open_reject_row(dropped):
    result = dropped("i2")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "item item_id='i2': no delivery of it is in bronze as of the last build (or the last build has not run)."
    assert lines[1] == ("It is not in the entity: bronze no longer holds its delivery l1-2, which the reject table keeps "
                        "(`assay replay item` re-delivers an open reject row whose bronze row is gone, when its key is "
                        "free: decision 0920). 1 open reject row.")
    assert any(line.startswith("reject row ") and "raw_items row l1-2: open;" in line and "qty_range_min" in line
               for line in lines), lines
    as_json = json.loads(dropped("i2", "--json").output)
    assert [(r["_source_row_id"], r["resolved_at"], r["failed_rules"]) for r in as_json["rejects"]] == [
        ("l1-2", None, ["qty_range_min"])]
    assert as_json["deliveries"] == [] and as_json["in_entity"] is False


def test_a_source_row_bronze_dropped_is_explained_by_its_reject_row(dropped):
    result = dropped("--source-row-id", "l1-2", "--json")
    assert result.exit_code == 0, result.output
    assert [r["_source_row_id"] for r in json.loads(result.output)["rejects"]] == ["l1-2"]


def test_a_key_found_nowhere_still_exits_1(dropped):
    result = dropped("i9")
    assert result.exit_code == 1, result.output
    assert "is not in item's bronze or reject rows" in result.output
    # another key's reject row is not told as this key's (`key_values` is matched part by part)
    assert "l1-2" not in dropped("i").output


def test_a_spec_changed_since_the_build_is_said_and_its_new_rules_are_not_called_held(dropped):
    """An outside tester (session 40) renamed a field after the build and read every rule of the new
    name as `held`, on a row the build had quarantined under the old one."""
    (dropped.root / "changed").mkdir(exist_ok=True)
    changed = write_spec(dropped.root / "changed", fill(ENTITY, thresholds="", expr_limit="", checks="",
                                                        expr_fail="flag").replace("qty: {type: int}", "amount: {type: int}"),
                         fill(MAPPING, range_limit="").replace("  qty:\n", "  amount:\n"))
    found = json.loads(dropped("i1", "--json", spec=changed).output)
    assert found["summary"][1].startswith("The last build ran another version of the spec (its staged relation has "
                                          "no column amount; it did not run amount_coercible, amount_range_min)"), \
        found["summary"]
    verdicts = {v["rule"]: v["verdict"] for d in found["deliveries"] for v in d["verdicts"]}
    assert verdicts["amount_range_min"] == verdicts["amount_coercible"] == "not judged by the last build", verdicts
    assert verdicts["name_not_x"] == "held", verdicts



def test_a_rule_added_since_the_build_on_a_column_it_staged_is_not_called_held(dropped):
    """An outside tester (session 48) added a range rule on a field the build staged, without
    building: explain read the new rule as `held`. The quality history counts every rule a run
    built; one it does not count was not judged."""
    (dropped.root / "added").mkdir(exist_ok=True)
    added = write_spec(dropped.root / "added", fill(ENTITY, thresholds="", expr_limit="", checks="", expr_fail="flag"),
                       fill(MAPPING, range_limit="").replace(
                           "      - {rule: range, min: 0, on_fail: quarantine}",
                           "      - {rule: range, min: 0, on_fail: quarantine}\n      - {rule: range, max: 0, on_fail: flag}"))
    found = json.loads(dropped("i1", "--json", spec=added).output)
    verdicts = {v["rule"]: v["verdict"] for d in found["deliveries"] for v in d["verdicts"]}
    assert verdicts["qty_range_max"] == "not judged by the last build", verdicts
    assert verdicts["qty_range_min"] == verdicts["name_not_x"] == "held", verdicts
    assert found["summary"][1].startswith("The last build ran another version of the spec (it did not run "
                                          "qty_range_max)"), found["summary"]
