"""What a set-back build leaves in the reject table, and what the next build does with it (decision
0944), on a real dbt build on DuckDB.

`item` quarantines a negative `qty` and limits the growth of its quarantine rate (`max_increase`,
`on_breach: fail`). Three builds:

1. 8 rows, 1 quarantined (l1-3): published.
2. 30 more rows, 20 quarantined: QUARANTINE_INCREASE sets the entity back. The reject node ran
   before the entity's checks decided, so the 20 diversions are in the reject table: each names
   the set-back build (`last_run_id`), and `assay report` counts them apart from the rows of the
   published build (open 21 = 1 + 20 of the build that was not published) and labels the latest
   run's counts. Nothing is resolved (l1-3 stays open: the published entity does not hold i3).
3. The source re-sends the 20 rows corrected (same `_source_row_id`, a later load): the build
   publishes, the conservation audit holds, and the rows of the set-back build are resolved by it
   (`admitted`, l1-3 `deduped`: i3's newer row won its key), every reject row naming run 3.

Expected counts are worked out by hand below, per load.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.support.corpus import Relation
from tests.support.dbtproject import make_project
from tests.support.items import COLS, ENTITY, MAPPING, fill, items_load, published, run_id, write_spec

pytestmark = pytest.mark.slow

# The shared item spec (tests/support/items.py; its flag rule fires on no row here), with dedupe and
# the limit on the growth of the quarantine rate.
ENTITIES = fill(ENTITY, thresholds="""\
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    thresholds:
      max_increase: {factor: "2", floor: 2, on_breach: fail}""", expr_fail="flag", expr_limit="", checks="")
# The shared item mapping (tests/support/items.py): qty below 0 is quarantined.
ITEMS = fill(MAPPING, range_limit="")

# i1..i8: i3 quarantined
LOAD1 = items_load("l1", [("a", "1"), ("b", "2"), ("c", "-1"), ("d", "4"), ("e", "5"), ("f", "6"), ("g", "7"), ("h", "8")])
# i1..i30: i6..i25 quarantined (20 rows); i1..i8 win their keys over load 1's rows (later)
LOAD2 = items_load("l2", [("a", "1")] * 5 + [("n", "-1")] * 20 + [("n", "5")] * 5)
# the source re-sends l2-6..l2-25 corrected: the same source rows, a later delivery
LOAD3 = [["l3", "2026-02-03T08:00:00Z", f"l2-{n}", f"i{n}", "n", "3"] for n in range(6, 26)]
BAD = [f"l2-{n}" for n in range(6, 26)]


def bronze(*loads: list[list[str]]) -> Relation:
    return Relation("raw_items", COLS, [r for load in loads for r in load])


def report(project, spec) -> dict:
    """`assay report --json`'s entry of `item` and its health line (either target)."""
    from assay.cli.main import cli

    res = CliRunner().invoke(cli, ["report", "--json", "--project", str(project.path), "--spec", str(spec),
                                   "--now", "2026-02-04T00:00:00Z"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    [entity] = data["entities"]
    [line] = [l for l in data["health"]["lines"] if l["entity"] == "item"]
    return {**entity, "health": line}


def rejects(project) -> dict[str, tuple]:
    """{_source_row_id: (open, resolution, last_run_id)}."""
    return {r[0]: (r[1], r[2], r[3]) for r in project.query(
        "select _source_row_id, resolved_at is null, resolution, last_run_id from silver.item__reject")}


def latest(entity: dict) -> tuple:
    run = entity["latest"]
    return run["run_id"], run["bronze"], run["kept"], run["quarantined"], run["deduped"]


def test_a_set_back_builds_rejects_name_it_and_the_next_build_takes_them_over(tmp_path):
    spec = write_spec(tmp_path, ENTITIES, ITEMS)
    project = make_project(tmp_path / "proj", spec, engine="duckdb")

    # 1. published: i3 quarantined
    project.load_bronze([bronze(LOAD1)])
    assert project.dbt("build").returncode == 0
    run1 = run_id(project)
    before = published(project)
    assert before == ["i1", "i2", "i4", "i5", "i6", "i7", "i8"]
    assert rejects(project) == {"l1-3": (True, None, run1)}

    # 2. 20 of 30 quarantined after 1 of 8: set back
    project.load_bronze([bronze(LOAD1, LOAD2)])
    proc = project.dbt("build")
    assert proc.returncode != 0 and "QUARANTINE_INCREASE" in proc.stdout, proc.stdout[-3000:]
    run2 = run_id(project)
    assert published(project) == before
    # the reject node ran before the entity's checks: its 20 diversions are there, naming run 2;
    # nothing is resolved (l1-3's key i3 has a kept row in run 2, which was not published)
    assert rejects(project) == {"l1-3": (True, None, run1), **{s: (True, None, run2) for s in BAD}}
    got = report(project, spec)
    assert got["outcome"]["state"] == "set_back" and got["outcome"]["run"] == run2
    # the mart records the judged run (decision 0413): 38 bronze rows = 10 kept + 20 quarantined +
    # 8 deduped (load 1's i1..i8, which lost their keys)
    assert latest(got) == (run2, 38, 10, 20, 8)
    assert got["unpublished_builds"] == [run2]
    assert got["rejects"]["open"] == 21
    assert got["rejects"]["unpublished"] == {"runs": [run2], "open": 20, "resolved": 0}
    assert (f"20 open reject rows were last judged by run {run2}, a build whose entity was not published; the "
            "published version of the entity was built before that judgement, and the next build that publishes judges "
            "them again") in got["health"]["reasons"]

    from assay.cli.main import cli

    said = CliRunner().invoke(cli, ["explain", "item", "i10", "--project", str(project.path), "--spec", str(spec)])
    assert "It is not in the entity" in said.output and f"failed rules: qty_range_min; written by run {run2}" in said.output, \
        said.output
    # i1's newer delivery was kept by run 2, which was not published: the published row is load 1's
    said = CliRunner().invoke(cli, ["explain", "item", "i1", "--project", str(project.path), "--spec", str(spec)])
    assert ("The last build kept its delivery l2-1 (load l2), but the published table holds delivery l1-1 of load l1 "
            "(the last build was not published). 0 open reject rows.") in said.output, said.output

    # 3. the corrected re-delivery publishes; the conservation audit (blocking) holds
    project.load_bronze([bronze(LOAD1, LOAD2, LOAD3)])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    run3 = run_id(project)
    assert published(project) == sorted(f"i{n}" for n in range(1, 31))
    assert rejects(project) == {"l1-3": (False, "deduped", run3), **{s: (False, "admitted", run3) for s in BAD}}
    got = report(project, spec)
    assert got["outcome"]["state"] == "published"
    # 58 bronze rows = 30 kept + 0 quarantined + 28 deduped (8 key losers of load 1, 20 superseded
    # deliveries of load 2)
    assert latest(got) == (run3, 58, 30, 0, 28)
    assert got["unpublished_builds"] == []
    assert (got["rejects"]["open"], got["rejects"]["unpublished"]) == (0, None)
    assert not [r for r in got["health"]["reasons"] if "not published" in r]
