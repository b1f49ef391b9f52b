"""Replay after a spec fix, for rows whose bronze has aged out: re-delivered from `raw` with
`_load_id = '__replay__'`, judged by the next build, merged by key under the dedupe order."""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

COLS = ["_load_id", "_ingested_at", "_source_row_id", "order_id", "line_no", "order_date", "amount", "code", "status"]
CLEAN = ["l1", "2026-02-01T10:00:00Z", "ln_01", "ORD-1", "1", "2026-01-31", "10.00", "A", "open"]
# two deliveries of one key, both with a status the first spec does not know
HELD_A = ["l1", "2026-02-01T10:00:00Z", "ln_02", "ORD-2", "1", "2026-01-31", "11.00", "B", "pending"]
HELD_B = ["l2", "2026-02-01T11:00:00Z", "ln_03", "ORD-2", "1", "2026-01-31", "12.00", "C", "pending"]
OTHER = [
    Relation("q__codes", ["_load_id", "_ingested_at", "_source_row_id", "code_id", "code_flag", "code_quar", "code_fail"], []),
    Relation("q__dups", ["_load_id", "_ingested_at", "_source_row_id", "group_id", "status", "note"], []),
]


def test_replay_brings_back_rows_whose_bronze_aged_out(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(PRECEDENCE / "spec", spec)
    project = make_project(tmp_path / "proj", spec)
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_A, HELD_B])] + OTHER)
    project.dbt("build", check=True)
    # The newer delivery of ORD-2 wins the dedupe and is quarantined; the older one is deduped.
    assert dict(project.query('select _source_row_id, _route from silver."q_line__staged"')) == {
        "ln_01": "kept", "ln_02": "deduped", "ln_03": "quarantined"}
    # Bronze retention drops the held rows; the reject row stays open, as history.
    project.load_bronze([Relation("q__lines", COLS, [CLEAN])] + OTHER)
    project.dbt("build", check=True)
    before = project.query("select first_seen, last_seen from silver.q_line__reject where _source_row_id = 'ln_03' and resolved_at is null")
    assert len(before) == 1

    # The spec is fixed: `pending` becomes a valid status.
    mapping = spec / "mapping_lines.yaml"
    mapping.write_text(mapping.read_text().replace("      - open\n      - closed\n", "      - open\n      - closed\n      - pending\n"))
    generate_dbt_project(spec, project.path)
    args = ["replay", "q_line", "--spec", str(spec), "--project", str(project.path)]
    dry = CliRunner().invoke(cli, args + ["--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "would re-deliver 1 rows into bronze.q__lines" in dry.output
    assert project.query('select count(*) from bronze."q__lines"') == [(1,)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "re-delivered 1 rows into bronze.q__lines with _load_id '__replay__'" in res.output
    project.dbt("build", check=True)

    rows = project.query('select order_id, amount, _load_id, _source_row_id from silver."q_line" order by order_id')
    assert [(r[0], str(r[1]), r[2], r[3]) for r in rows] == [
        ("ORD-1", "10.000000000", "l1", "ln_01"), ("ORD-2", "12.000000000", "__replay__", "ln_03")]
    rej = project.query("select resolution, first_seen, last_seen from silver.q_line__reject where _source_row_id = 'ln_03'")
    assert rej[0][0] == "admitted" and (rej[0][1], rej[0][2]) == before[0]  # first and last seen never move
    # A second replay finds nothing left to do.
    again = CliRunner().invoke(cli, args)
    assert "re-delivered" not in again.output and "0 open reject rows" in again.output
