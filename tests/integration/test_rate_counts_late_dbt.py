"""The counts of a threshold are the mart's counts of the run (decision 0949), late arrivals included.

An incremental entity's late rows (ingested before the window start) are quarantined under
`_late_arrival` with no dedupe rank; the mart counts them as evaluated and quarantined. The
rates and change limits once counted them as quarantined only ("quarantined 4 of 1 evaluated
row, a rate of 4"). Two loads on DuckDB, as an outside tester found it:

1. one good row ingested at 20:00: quarantined 0 of 1;
2. four new rows ingested at 10:00, before the window start (20:00 - lag 2h): late, so the run
   quarantines 4 of 5, and every recorded count equals the mart's `(entity)` / rule row.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project
from tests.support.items import COLS, ENTITY, MAPPING, checks, fill, run_id, write_spec

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("an incremental entity built by dbt; in the fast loop checks/test_rates.py runs the evaluated "
                     "condition over a late row and cli/test_checks_wire_shape.py the warned label and rows"),
]

# The shared item entity (tests/support/items.py), incremental with a 2h lag, its flag rule with a rate.
ENTITIES = fill(ENTITY, checks="", expr_fail="flag", expr_limit=', max_rate: "0.5", on_breach: warn', thresholds="""\
    materialized: incremental
    incremental: {lag: 2h}
    thresholds:
      max_quarantine_rate: "0.5"
      on_breach: warn
      max_increase: {factor: "2", floor: 0}""")
ITEMS = fill(MAPPING, range_limit="")
GOOD = ["l1", "2026-12-05T20:00:00Z", "l1-1", "i1", "a", "1"]
LATE = [["l2", "2026-12-05T10:00:00Z", f"l2-{n}", f"i{n}", "x", "2"] for n in range(2, 6)]


def test_late_rows_count_as_the_mart_counts(tmp_path):
    project = make_project(tmp_path / "proj", write_spec(tmp_path, ENTITIES, ITEMS), engine="duckdb")
    project.load_bronze([Relation("raw_items", COLS, [GOOD])])
    assert project.dbt("build").returncode == 0
    project.load_bronze([Relation("raw_items", COLS, [GOOD, *LATE])])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-5000:]
    run = run_id(project)

    mart = {r[0]: (r[1], r[2], r[3]) for r in project.query(
        "select rule, rows_evaluated, rows_quarantined, rows_failed from gold.mart_data_quality "
        f"where entity = 'item' and run_id = '{run}'")}
    assert mart["(entity)"] == (5, 4, 0), mart  # the late rows are evaluated and quarantined
    evaluated, quarantined, _ = mart["(entity)"]
    recorded = {r[0]: json.loads(r[1]) for r in project.query(
        f"select check_id, measures from assay_meta.assay_check_results where run_id = '{run}'")}
    assert (recorded["QUARANTINE_RATE"]["evaluated"], recorded["QUARANTINE_RATE"]["failing"]) == (evaluated, quarantined)
    assert (recorded["QUARANTINE_INCREASE"]["evaluated"], recorded["QUARANTINE_INCREASE"]["failing"]) == (
        evaluated, quarantined)
    # a late row is never judged by the rules, so the flag rule fired on none of the five
    assert (recorded["NAME_NOT_X_RATE"]["evaluated"], recorded["NAME_NOT_X_RATE"]["failing"]) == (
        evaluated, mart["name_not_x"][2])

    code, results, text = checks(project, run)
    assert code == 2, text
    assert results["QUARANTINE_RATE"]["detail"] == (
        "quarantined 4 of 5 evaluated rows, a rate of 0.8, above the declared maximum of 0.5")
    assert results["NAME_NOT_X_RATE"]["passed"] is True
    # on_breach: warn reads `warned` in both commands, and the list shows the rows counted
    assert ("item: QUARANTINE_RATE: warned: quarantined 4 of 5 evaluated rows, a rate of 0.8, above the declared "
            "maximum of 0.5") in text, text
    listed = CliRunner().invoke(cli, ["check", "list", "--json", "--project", str(project.path)])
    rows = {(i["check"], i["run"]): (i["outcome"], i["rows"]) for i in json.loads(listed.stdout)}
    assert rows[("QUARANTINE_RATE", run)] == ("warned", quarantined)
