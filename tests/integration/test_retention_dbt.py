"""Retention (`assay maintain`) on real reject tables built by dbt, DuckDB and PostgreSQL.

Unresolved rows expire `retention` after `last_seen`, resolved rows `retention` after
`resolved_at`; a row exactly at the cut-off stays; a dry run changes nothing; a second run deletes
nothing; every run records one event per reject table. The clock is injected with `--now`.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest
from click.testing import CliRunner

from assay.cli.maintain_cmd import maintain_cmd
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

COLS = ["_load_id", "_ingested_at", "_source_row_id", "order_id", "line_no", "order_date", "amount", "code", "status"]
CLEAN = ["l1", "2026-02-01T10:00:00Z", "ln_01", "ORD-1", "1", "2026-01-31", "10.00", "A", "open"]
# `pending` is not a status the spec knows: both rows are quarantined (codes are unique: a rule).
HELD_2 = ["l1", "2026-02-01T11:00:00Z", "ln_02", "ORD-2", "1", "2026-01-31", "12.00", "B", "pending"]
HELD_3 = ["l1", "2026-03-01T10:00:00Z", "ln_03", "ORD-3", "1", "2026-01-31", "13.00", "D", "pending"]
# a newer clean delivery of ORD-2 under a new id: ln_02 resolves as deduped
FIX_2 = ["l2", "2026-03-10T00:00:00Z", "ln_04", "ORD-2", "1", "2026-01-31", "12.00", "E", "open"]
OTHER = [
    Relation("q__codes", ["_load_id", "_ingested_at", "_source_row_id", "code_id", "code_flag", "code_quar", "code_fail"], []),
    Relation("q__dups", ["_load_id", "_ingested_at", "_source_row_id", "group_id", "status", "note"], []),
]


def _build(tmp_path, engine, pg=None):
    spec = tmp_path / "spec"
    shutil.copytree(PRECEDENCE / "spec", spec)
    project = make_project(tmp_path / "proj", spec, engine=engine, pg=pg)
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3])] + OTHER)
    project.dbt("build", check=True)
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3, FIX_2])] + OTHER)
    project.dbt("build", check=True)
    return project, spec


def test_retention_on_duckdb(tmp_path):
    _scenario(*_build(tmp_path, "duckdb"))


@pytest.mark.postgres
def test_retention_on_postgres(tmp_path, postgres_database):
    _scenario(*_build(tmp_path, "postgres", postgres_database("retention")))


def _maintain(project, spec, *extra):
    res = CliRunner().invoke(maintain_cmd, ["--project", str(project.path), "--spec", str(spec), "--json", *extra])
    assert res.exit_code == 0, res.output
    return {e["entity"]: e for e in json.loads(res.output)}


def _rejects(project):
    return sorted(project.query("select _source_row_id, resolution from silver.q_line__reject"), key=lambda r: r[0])


def _scenario(project, spec):
    """Retention deletes only what has expired, measured from the right column, and records it."""
    assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None)]
    resolved_at = project.query("select resolved_at from silver.q_line__reject where _source_row_id = 'ln_02'")[0][0]

    # Exactly 90 days after ln_03's last_seen: at the cut-off, not before it, so it stays.
    at_cutoff = _maintain(project, spec, "--now", "2026-05-30T10:00:00Z")
    assert (at_cutoff["q_line"]["unresolved_deleted"], at_cutoff["q_line"]["resolved_deleted"]) == (0, 0)

    # A dry run one second later counts ln_03 and deletes nothing.
    dry = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z", "--dry-run")
    assert (dry["q_line"]["unresolved_deleted"], dry["q_line"]["resolved_deleted"]) == (1, 0)
    assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None)]

    done = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z")
    assert (done["q_line"]["unresolved_deleted"], done["q_line"]["resolved_deleted"]) == (1, 0)
    assert done["q_line"]["cutoff"] == "2026-03-01T10:00:01"
    # ln_02 was resolved by the second build (run time); it is measured from resolved_at, not last_seen.
    assert _rejects(project) == [("ln_02", "deduped")]

    again = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z")
    assert again["q_line"]["unresolved_deleted"] + again["q_line"]["resolved_deleted"] == 0

    later = (resolved_at + dt.timedelta(days=90, seconds=1)).isoformat()
    expired = _maintain(project, spec, "--now", later)
    assert (expired["q_line"]["unresolved_deleted"], expired["q_line"]["resolved_deleted"]) == (0, 1)
    assert _rejects(project) == []

    events = project.query(
        "select event_type, table_name, cutoff, row_count from assay_meta.assay_events "
        "where table_name = 'silver.q_line__reject'")
    # the at-cut-off run, the real run, the repeat, the resolved expiry (the dry run records nothing)
    table = ("REJECTS_EXPIRED", "silver.q_line__reject")
    assert sorted(events, key=lambda e: (e[2], e[3])) == [
        (*table, dt.datetime(2026, 3, 1, 10, 0, 0), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 1),
        (*table, resolved_at + dt.timedelta(seconds=1), 1),
    ]
    # the other entities' reject tables were maintained too, with nothing to delete
    assert set(expired) == {"q_code", "q_dup", "q_line"}
