"""`assay explain` of a late row on an incremental entity, on a real dbt build (DuckDB; decision 1129).

A late delivery (older than the ledger's window when it was processed, decision 0401) is not
ranked and not judged: explain says it arrived late and was quarantined as `_late_arrival`, lists no
rule as held, and a late delivery of a key that has a judged one does not speak for that key.
Uses the incremental fixture spec (orders: lag 2h) and the deliveries helpers of
tests/integration/test_incremental_dbt.py.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.integration.test_incremental_dbt import SPEC, Bronze, customer, order
from tests.support.dbtproject import make_project

pytestmark = [pytest.mark.slow]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    project = make_project(tmp_path_factory.mktemp("explain_late") / "inc", SPEC)
    bronze = Bronze()
    for deliveries in (
        [customer("k1", "C-1", "10:00", "l1"), order("a1", "A1", "10:00", "l1")],
        # the window starts at 08:00 (10:00 minus the 2h lag): both are late
        [order("z1", "LATE1", "07:00", "l2"), order("z2", "A1", "07:30", "l2", qty="99")],
    ):
        bronze.deliver(deliveries)
        project.load_bronze(bronze.relations())
        proc = project.dbt("build")  # a forked dbt: it leaves no connection to the warehouse open
        assert proc.returncode == 0, proc.stdout[-4000:]
    late = project.query("select _source_row_id from silver.orders__staged where _late order by 1")
    assert late == [("z1",), ("z2",)], late
    return project


def _explain(project, *args):
    res = CliRunner().invoke(cli, ["explain", "orders", *args, "--project", str(project.path), "--spec", str(SPEC)])
    assert res.exit_code == 0, res.output
    return res.output


def test_a_late_row_is_said_late_not_judged(built):
    out = _explain(built, "LATE1")
    assert ("It is not in the entity: its delivery z1 arrived late (older than the ledger's watermark), was not ranked "
            "or judged, and was quarantined as _late_arrival. 1 open reject row.") in out, out
    assert "judged delivery" not in out
    assert ": arrived late, quarantined to the reject table unjudged" in out
    assert "arrived late: its _ingested_at " in out and "minus the arrival lag 2h" in out and "not ranked and not judged" in out
    assert "rule quantity_sane" not in out and ": held" not in out, out  # no rule ran on it
    assert "_late_arrival" in out.split("reject row ", 1)[1]


def test_the_json_has_no_verdicts_for_a_late_delivery(built):
    doc = json.loads(_explain(built, "LATE1", "--json"))
    [d] = doc["deliveries"]
    assert d["late"] is True and d["verdicts"] == [] and d["route"] == "quarantined"
    assert doc["in_entity"] is False


def test_a_late_delivery_of_a_judged_key_does_not_speak_for_it(built):
    out = _explain(built, "A1")
    # a1 (10:00) is the judged, kept delivery; z2 (07:30, quantity 99) came late and was never judged
    assert "It is in the entity (published). Its delivery z2 arrived late, was not ranked or judged, and was " \
           "quarantined as _late_arrival. 1 open reject row." in out, out
    assert "won the dedupe" not in out
    late_block = out.split("raw_orders row z2", 1)[1].split("\n\n", 1)[0]
    assert "\n   rule " not in late_block, late_block
