"""Replay after a spec fix, for rows whose bronze has aged out: re-delivered from `raw` with
`_load_id = '__replay__'`, judged by the next build, merged by key under the dedupe order.

Runs once per engine (the `engine` fixture), so replay's PostgreSQL code path runs too. Every
build is judged against the oracle (entity, staged routes, reject table, mart, conservation),
and what `assay replay` writes into bronze is compared with what the oracle says it must
re-deliver (`Warehouse.replay`, decision 0011).
"""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.oracle import Warehouse, expected_state, observed_state, placements

pytestmark = pytest.mark.slow

COLS = ["_load_id", "_ingested_at", "_source_row_id", "order_id", "line_no", "order_date", "amount", "code", "status"]
CLEAN = ["l1", "2026-02-01T10:00:00Z", "ln_01", "ORD-1", "1", "2026-01-31", "10.00", "A", "open"]
# two deliveries of one key, both with a status the first spec does not know
HELD_A = ["l1", "2026-02-01T10:00:00Z", "ln_02", "ORD-2", "1", "2026-01-31", "11.00", "B", "pending"]
HELD_B = ["l2", "2026-02-01T11:00:00Z", "ln_03", "ORD-2", "1", "2026-01-31", "12.00", "C", "pending"]
OTHER_COLS = {
    "q__codes": ["_load_id", "_ingested_at", "_source_row_id", "code_id", "code_flag", "code_quar", "code_fail"],
    "q__dups": ["_load_id", "_ingested_at", "_source_row_id", "group_id", "status", "note"],
}


def _bronze(lines: list) -> dict:
    return {"q__lines": [dict(zip(COLS, r)) for r in lines], **{name: [] for name in OTHER_COLS}}


def _relations(bronze: dict) -> list:
    cols = {"q__lines": COLS, **OTHER_COLS}
    return [Relation(name, cols[name], [[r[c] for c in cols[name]] for r in rows]) for name, rows in bronze.items()]


def _run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


def _build_and_judge(project, wh: Warehouse, spec, bronze: dict, when: str) -> None:
    project.load_bronze(_relations(bronze))
    project.dbt("build", check=True)
    build = wh.build(bronze)
    expected, observed = expected_state(wh, build), observed_state(project.query, spec, _run_id(project))
    places = placements(project.query, spec, bronze)
    assert {k: v for k, v in places.items() if len(v) != 1} == {}, f"{when}: conservation"
    for part in ("entity", "staged", "reject", "mart"):
        assert observed[part] == expected[part], f"{when}: {part} disagrees with the oracle"


def _bronze_lines(project) -> list:
    cols = ", ".join(f'"{c}"' for c in COLS)
    return sorted(tuple(r) for r in project.query(f'select {cols} from bronze."q__lines"'))


def test_replay_brings_back_rows_whose_bronze_aged_out(tmp_path, engine):
    spec = tmp_path / "spec"
    shutil.copytree(PRECEDENCE / "spec", spec)
    project = engine.dbt_project(tmp_path / "proj", spec, "replay_dbt")
    wh = Warehouse(spec)

    _build_and_judge(project, wh, spec, _bronze([CLEAN, HELD_A, HELD_B]), "first build")
    # The newer delivery of ORD-2 wins the dedupe and is quarantined; the older one is deduped.
    assert dict(project.query('select _source_row_id, _route from silver."q_line__staged"')) == {
        "ln_01": "kept", "ln_02": "deduped", "ln_03": "quarantined"}
    # Bronze retention drops the held rows; the reject row stays open, as history.
    aged = _bronze([CLEAN])
    _build_and_judge(project, wh, spec, aged, "after bronze aged out")
    before = project.query("select first_seen, last_seen from silver.q_line__reject where _source_row_id = 'ln_03' and resolved_at is null")
    assert len(before) == 1

    # The spec is fixed: `pending` becomes a valid status.
    mapping = spec / "mapping_lines.yaml"
    mapping.write_text(mapping.read_text().replace("      - open\n      - closed\n", "      - open\n      - closed\n      - pending\n"))
    generate_dbt_project(spec, project.path)
    wh.respec(spec)
    args = ["replay", "q_line", "--spec", str(spec), "--project", str(project.path), "--json"]
    # What replay must re-deliver, per the oracle: ln_03 from raw, nothing else.
    redelivered = wh.replay("q_line", aged)
    assert set(redelivered) == {"q__lines"} and [r["_source_row_id"] for r in redelivered["q__lines"]] == ["ln_03"]
    dry = CliRunner().invoke(cli, args + ["--dry-run"])
    assert dry.exit_code == 0, dry.output
    said = json.loads(dry.stdout)
    assert (said["dry_run"], said["redelivered"], said["unrecoverable"]) == (
        True, {src: len(rows) for src, rows in redelivered.items()}, 0)
    assert project.query('select count(*) from bronze."q__lines"') == [(1,)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["redelivered"] == {"q__lines": 1}

    # What replay wrote into bronze is exactly what the oracle said it must re-deliver.
    replayed = {"q__lines": aged["q__lines"] + redelivered["q__lines"], **{n: [] for n in OTHER_COLS}}
    assert _bronze_lines(project) == sorted(tuple(r[c] for c in COLS) for r in replayed["q__lines"])
    _build_and_judge(project, wh, spec, replayed, "after replay")

    rows = project.query('select order_id, amount, _load_id, _source_row_id from silver."q_line" order by order_id')
    assert [(r[0], str(r[1]), r[2], r[3]) for r in rows] == [
        ("ORD-1", "10.000000000", "l1", "ln_01"), ("ORD-2", "12.000000000", "__replay__", "ln_03")]
    rej = project.query("select resolution, first_seen, last_seen from silver.q_line__reject where _source_row_id = 'ln_03'")
    assert rej[0][0] == "admitted" and (rej[0][1], rej[0][2]) == before[0]  # first and last seen never move
    # A second replay finds nothing left to do, as the oracle says.
    assert wh.replay("q_line", replayed) == {}
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 0, again.output
    said = json.loads(again.stdout)
    assert (said["redelivered"], said["in_bronze"]) == ({}, 0)
