"""The corpus's precedence policy with rows written for its cases: severity, `unique` at every
disposition, and a `fail` that beats a `quarantine` on the same row."""

from __future__ import annotations

import pytest

from tests.support import dbtresults
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.dbtproject import make_project
from tests.support.outcomes import observe

pytestmark = pytest.mark.slow

META = ["_load_id", "_ingested_at", "_source_row_id"]
T1, T2 = "2026-02-01T10:00:00Z", "2026-02-01T11:00:00Z"

LINES = Relation(
    "q__lines",
    META + ["order_id", "line_no", "order_date", "amount", "code", "status"],
    [
        ["l1", T1, "ln_01", "ORD-1", "1", "2026-01-31", "10.00", "A", "open"],  # pass
        ["l1", T1, "ln_02", "ORD-2", "1", "2026-01-31", "11.00", "B", "bogus"],  # status: quarantine
        ["l1", T1, "ln_03", "ORD-3", "1", "2026-01-31", "12.00", "DUP", "open"],  # code repeats: quarantine
        ["l1", T1, "ln_04", "ORD-3", "2", "2026-01-31", "13.00", "DUP", "closed"],  # code repeats: quarantine
        ["l1", T1, "ln_05", "ORD-4", "1", "2026-01-31", "14.00", "C", "bogus"],  # older, loses the dedupe
        ["l2", T2, "ln_06", "ORD-4", "1", "2026-01-31", "15.00", "D", "open"],  # newer: wins, pass
        ["l1", T1, "ln_07", "ORD-5", "1", "2026-01-31", "16.00", "E", "open"],  # older clean row...
        ["l2", T2, "ln_08", "ORD-5", "1", "2026-01-31", "17.00", "F", "nope"],  # ...evicted by a corrupt newer one
        ["l1", T1, "ln_09", "ORD-6", "1", "31/01/2026", "18.00", "G", "open"],  # date does not parse
    ],
)
LINES_EXPECTED = {
    "ln_01": "pass", "ln_02": "quarantine", "ln_03": "quarantine", "ln_04": "quarantine", "ln_05": "dedupe_loser",
    "ln_06": "pass", "ln_07": "dedupe_loser", "ln_08": "quarantine", "ln_09": "quarantine",
}
CODES = Relation(
    "q__codes",
    META + ["code_id", "code_flag", "code_quar", "code_fail"],
    [
        ["l1", T1, "cd_01", "K1", "F", "Q1", "X1"],
        ["l1", T1, "cd_02", "K2", "F", "Q2", "X2"],  # code_flag repeats with K1: both flagged
        ["l1", T1, "cd_03", "K3", "G", "QQ", "X3"],
        ["l1", T1, "cd_04", "K4", "H", "QQ", "X4"],  # code_quar repeats with K3: both quarantined
        ["l1", T1, "cd_05", "K5", "I", "Q5", None],  # NULL never repeats
        ["l1", T1, "cd_06", "K6", "J", "Q6", None],
    ],
)
CODES_EXPECTED = {"cd_01": "flag", "cd_02": "flag", "cd_03": "quarantine", "cd_04": "quarantine", "cd_05": "pass", "cd_06": "pass"}
DUPS = Relation(
    "q__dups",
    META + ["group_id", "status", "note"],
    [
        ["l1", T1, "dp_01", "G1", "open", "first"],
        ["l1", T1, "dp_02", "G2", "pending", "a"],  # two rejects that share a key
        ["l1", T1, "dp_03", "G2", "waiting", "b"],
    ],
)
DUPS_EXPECTED = {"dp_01": "pass", "dp_02": "quarantine", "dp_03": "quarantine"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    p = make_project(tmp_path_factory.mktemp("precedence"), PRECEDENCE / "spec")
    p.load_bronze([LINES, CODES, DUPS])
    proc = p.dbt("build")
    assert proc.returncode == 0, proc.stdout[-5000:]
    return p


@pytest.mark.parametrize(
    "entity, expected",
    [("q_line", LINES_EXPECTED), ("q_code", CODES_EXPECTED), ("q_dup", DUPS_EXPECTED)],
)
def test_outcomes(project, entity, expected):
    seen = observe(project, entity)
    got = {srid: (seen[srid].outcome() if srid in seen else "nowhere") for srid in expected}
    assert got == expected


def test_rejects_record_every_failed_rule(project):
    rows = dict(project.query('select _source_row_id, failed_rules from silver."q_code__reject"'))
    assert list(rows["cd_03"]) == ["code_quar_unique"]
    flags = dict(project.query('select _source_row_id, _quality_flags from silver."q_code"'))
    assert list(flags["cd_01"]) == ["code_flag_unique"]


def _only_failed_test(project):
    """(unique_id, failing rows) of the one node of the last build that failed or errored."""
    bad = {uid: r["status"] for uid, r in dbtresults.nodes(project).items() if r["status"] in ("fail", "error")}
    assert len(bad) == 1 and list(bad.values()) == ["fail"], bad
    uid = next(iter(bad))
    return uid, dbtresults.failing_rows(project, uid)


def _srids(rows) -> set:
    return {v for row in rows for v in row if isinstance(v, str) and v[:3] in ("ln_", "cd_")}


def test_fail_beats_quarantine_and_stops_the_entity(project):
    """A row failing `amount_range_min` (fail) and `status_in_set` (quarantine) stops the run:
    the entity keeps its published rows and the reject table does not take the row."""
    bad = ["l3", "2026-02-01T12:00:00Z", "ln_10", "ORD-7", "1", "2026-01-31", "-1.00", "Z", "bogus"]
    project.load_bronze([Relation(LINES.name, LINES.columns, LINES.rows + [bad])])
    try:
        before = project.query('select count(*) from silver."q_line"')
        proc = project.dbt("build", "--select", "+q_line")
        assert proc.returncode != 0
        # exactly the `fail` rule's test failed, on exactly the bad row; the entity was skipped
        uid, rows = _only_failed_test(project)
        assert uid.startswith("test.assay_it.assay_fail_rule") and "amount_range_min" in uid, uid
        assert _srids(rows) == {"ln_10"}, rows
        assert dbtresults.statuses(project)["model.assay_it.q_line"] == "skipped"
        assert project.query('select count(*) from silver."q_line"') == before
        staged = project.query("select _route, _failed_rules from silver.\"q_line__staged\" where _source_row_id = 'ln_10'")
        assert staged[0][0] == "failed" and list(staged[0][1]) == ["amount_range_min", "status_in_set"]
        assert not project.query("select 1 from silver.\"q_line__reject\" where _source_row_id = 'ln_10'")
    finally:
        project.load_bronze([LINES])


def test_unique_at_fail_stops_the_run(project):
    dup = ["l2", T2, "cd_07", "K7", "L", "Q7", "X1"]  # code_fail repeats with K1
    project.load_bronze([Relation(CODES.name, CODES.columns, CODES.rows + [dup])])
    try:
        proc = project.dbt("build", "--select", "+q_code")
        assert proc.returncode != 0
        uid, rows = _only_failed_test(project)
        assert uid.startswith("test.assay_it.assay_fail_rule") and "code_fail_unique" in uid, uid
        assert _srids(rows) == {"cd_01", "cd_07"}, rows  # both rows sharing X1
        assert dbtresults.statuses(project)["model.assay_it.q_code"] == "skipped"
    finally:
        project.load_bronze([CODES])
