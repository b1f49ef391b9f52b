"""A rule change planned inside an interval the last run already processed (decision 0939).

Real plans on DuckDB, the spec of test_dev_range_conservation_sqlmesh.py (a type-2 `emp`, a child
`slip`), its clock pinned. prod is planned on two days; then a `range` rule is added to `emp` that
diverts a row the previous rules kept (E9, level 7), and `sqlmesh plan` is applied on the same
day. That plan rebuilds `emp__staged` and `emp__current` (FULL) but not the forward-only
`emp__reject` (its interval is already processed): before decision 0939 it passed and E9 was in no
table of prod until the next run (docs/sqlmesh.md, "Rule changes"). Now the conservation audit of
`emp__current` reads the reject table as it stands and stops the plan, in its own name; the stop
is recorded in `<meta>.assay_events` and prod's views keep the previous version. The same change
planned at the next interval passes: the reject model has a missing interval, runs before the
entity and takes E9 in, keeping the reject history it had.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.sqlmesh.test_dev_range_conservation_sqlmesh import META, change_rule, write_spec
from tests.sqlmesh.test_stopped_checks_sqlmesh import cli
from tests.sqlmesh.test_table_states_sqlmesh import OPEN
from tests.support.corpus import Relation
from tests.support.runners.sqlmesh import pin_clock
from tests.support.sqlmeshfailures import AuditFailure, plan_fails
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow

START = datetime(2026, 3, 1, 6, 0, 0, tzinfo=timezone.utc)
TS = "2026-01-01T00:00:00Z"
EMPS = [[f"E{i}", "2", "l1", TS, f"e{i}"] for i in range(3)] + [["E9", "7", "l1", TS, "e9"], ["E8", "x", "l1", TS, "e8"]]
REJECTS = "select _source_row_id, failed_rules, first_seen, resolved_at from silver.emp__reject order by 1"


def test_a_rule_change_that_diverts_rows_inside_a_processed_interval_is_stopped_by_conservation(tmp_path):
    spec = write_spec(tmp_path / "spec", level_rule=False)
    sm = make_project(tmp_path / "sqlmesh", spec)
    pin_clock(sm, START)
    sm.load_bronze([
        Relation("raw_emps", ["id", "level", *META], EMPS),
        Relation("raw_slips", ["id", "emp", *META], [[f"S{i}", f"E{i % 3}", "l1", TS, f"s{i}"] for i in range(5)]),
    ])
    try:
        sm.plan()
        sm.plan()
        before = sm.query(REJECTS)
        assert [r[0] for r in before] == ["e8"]  # E8's level is no integer: diverted from the start
        assert sm.query("select count(*) from silver.emp__current")[0][0] == 4

        # the same day: staged and __current are rebuilt, the forward-only reject model is not
        change_rule(spec, sm)
        failures = plan_fails(sm, advance=False)
        assert [(f.model_name, f.audit) for f in failures if isinstance(f, AuditFailure)] == [
            ("silver.emp__current", "assay_conservation")], failures
        assert all(isinstance(f, AuditFailure) for f in failures), failures
        [failure] = failures
        # bronze 5 = kept 3 + open rejects 1 (E8; E9 is diverted and in no table) + deduped 0
        assert sm.query(failure.sql) == [(5, 5, 3, 0, 2, 3, 1)]
        events = sm.query("select event_type, check_name, why from assay_meta.assay_events "
                          "where table_name = 'emp' and event_type <> 'RUN_ENVIRONMENT'")
        assert sorted((e, c) for e, c, _w in events) == [("CHECK_FAILED", "CONSERVATION"), ("TABLE_BUILD_FAILED", "CONSERVATION")]
        assert any(w.startswith("wrote sqlmesh__silver.silver__emp__current__") for _e, _c, w in events), events
        # the stop is a failed result of the plan's run in `assay checks` (decision 0941), exit 2
        OPEN[sm.path] = sm
        said = cli(sm.path, spec, "checks")
        assert said.exit_code == 2, said.output
        assert [line for line in said.stdout.splitlines() if line.startswith("emp: CONSERVATION: FAILED: ")], said.output
        # nothing was published: prod still reads the previous version, the reject table is as it was
        assert sm.query("select count(*) from silver.emp__current")[0][0] == 4
        assert sm.query(REJECTS) == before

        # at the next interval the reject model has an interval to evaluate, before the entity
        sm.plan()
        after = sm.query(REJECTS)
        assert [(r[0], r[1], r[3]) for r in after] == [("e8", ["level_coercible"], None), ("e9", ["level_range"], None)]
        assert after[0][2] == before[0][2]  # first_seen kept: the reject history survives
        assert sm.query("select count(*) from silver.emp__current")[0][0] == 3
        assert sm.run()
        assert sm.query("select count(*) from silver.slip")[0][0] == 5
    finally:
        sm.close()
