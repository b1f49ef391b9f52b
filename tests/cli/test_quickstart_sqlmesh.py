"""docs/sqlmesh-quickstart.md is true: every `sh` block runs, in order, as a user would type it
(bash, the `assay`, `sqlmesh` and `python` of this environment on PATH, real SQLMesh on DuckDB;
the walk is test_quickstart's), and each step prints what the page says it prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.test_quickstart import blocks, walk

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("docs/sqlmesh-quickstart.md typed from a shell; in the fast loop sqlmesh/test_shop_sqlmesh.py builds the example on SQLMesh"),
]

DOC = Path(__file__).resolve().parents[2] / "docs" / "sqlmesh-quickstart.md"
FIRST_LINES = ["assay init shop", "python - <<'EOF'", "assay validate --spec ../shop --target sqlmesh",
               "sqlmesh plan --auto-apply", "python - <<'EOF'", "python - <<'EOF'", "python - <<'EOF'",
               "assay checks", "assay report --out report.html"]
INIT, LOAD, GENERATE, PLAN, LOOK, RELOAD, RUN, OPERATE, REPORT = range(len(FIRST_LINES))


@pytest.fixture(scope="module")
def walked(tmp_path_factory):
    """Every sh block of the page, run in order from a fresh directory: (home, [result])."""
    home = tmp_path_factory.mktemp("user")
    return home, [proc for _, proc in walk(DOC, home)]


def _shown(*lines: str) -> None:
    """Each line is in one of the page's output blocks: what the test asserts is what the page shows."""
    shown = "\n".join(blocks("", DOC))
    for line in lines:
        assert line in shown, f"docs/sqlmesh-quickstart.md no longer shows {line!r}"


def test_the_page_has_every_step():
    assert [b.splitlines()[0] for b in blocks("sh", DOC)] == FIRST_LINES


def test_the_project_is_made_by_assay_init_and_sqlmesh_init(walked):
    home, done = walked
    assert "assay init: example project in shop" in done[INIT].stdout
    lake = home / "lake"
    config = (lake / "config.yaml").read_text()
    assert "type: duckdb" in config and "database: db.db" in config
    assert (lake / "db.db").exists() and not (home / "db.db").exists()


def test_bronze_is_loaded_into_the_gateways_file(walked):
    assert walked[1][LOAD].stdout == "raw_customers 6 rows\nraw_orders 10 rows\n"


def test_validate_and_generate(walked):
    home, done = walked
    out = done[GENERATE].stdout.splitlines()
    assert re.fullmatch(r"ok: 2 entities, 2 mappings, 21 rules, 1 check \(spec [0-9a-f]+, for sqlmesh\)", out[0]), out
    manifest = json.loads((home / "lake" / ".assay" / "manifest.json").read_text())
    assert manifest["target"] == "sqlmesh"
    assert out[1].startswith(f"assay generate: {len(manifest['files'])} written, 0 unchanged, 0 removed (2 entities, spec ../shop ")
    assert out[2:] == ["models land in silver and gold (SQLMesh's prod environment); bronze is read from bronze",
                       "next: sqlmesh plan"]
    _shown(*out[2:])
    for generated in ("models/assay/order/order.sql", "audits/assay.sql", "external_models/assay_bronze.yaml",
                      "macros/assay_macros.py"):
        assert (home / "lake" / generated).exists(), generated


def test_the_plan_applies_and_warns_per_flag_rule(walked):
    proc = walked[1][PLAN]
    out = " ".join((proc.stdout + proc.stderr).split())  # SQLMesh's console wraps at the terminal's width
    assert "Virtual layer updated" in out, out[-3000:]
    assert "'assay_flag__order__amount_range_max' audit error: 1 row" in out, out[-3000:]
    assert "'assay_coverage' audit error" in out, out[-3000:]
    _shown("[WARNING] silver.order: 'assay_flag__order__amount_range_max' audit error: 1 row\nfailed.")


def test_what_landed_is_what_the_page_shows(walked):
    proc = walked[1][LOOK]
    looked = proc.stdout.split("order order_id=")[0].splitlines()  # the python part, before explain's
    assert looked == ["entity O-1 120.00 ok", "entity O-2 80.50 ok", "entity O-3 15.00 flagged",
                      "entity O-8 25000.00 flagged", "entity O-9 60.00 flagged",
                      "reject o-004 ordered_at_coercible", "reject o-005 status_in_enum",
                      "reject o-006 amount_coercible", "reject o-007 amount_range_min,discount_not_above_amount",
                      "mart customer judged=5 quarantined=2 deduped=1", "mart order judged=9 quarantined=4 deduped=1"]
    _shown(*looked)
    explained = "It is not in the entity: its judged delivery o-006 was quarantined to the reject table. 1 open reject row."
    assert "order order_id='O-6': 1 delivery in bronze." in proc.stdout and explained in proc.stdout, proc.stdout


def test_the_second_load_is_judged_by_the_next_interval(walked):
    home, done = walked
    assert done[RELOAD].stdout == "raw_orders 11 rows\n"
    assert done[RUN].stdout.strip().splitlines()[-1] == "sqlmesh run: success"
    import duckdb

    con = duckdb.connect(str(home / "lake" / "db.db"), read_only=True)
    try:
        runs = con.execute("select run_id, rows_quarantined, rows_deduped from gold.mart_data_quality "
                           "where entity = 'order' and rule = '(entity)' order by run_started_at").fetchall()
        resolution = con.execute("select resolution from silver.order__reject where _source_row_id = 'o-006'").fetchall()
    finally:
        con.close()
    assert [r[0].split(":")[0] for r in runs] == ["SQLMESH_PLAN", "SQLMESH_RUN"]
    assert [r[1:] for r in runs] == [(4, 1), (3, 2)]
    assert resolution == [("admitted",)]


def test_the_operator_commands_read_the_sqlmesh_warehouse(walked):
    proc = walked[1][OPERATE]
    latest = re.search(r"^run SQLMESH_RUN: ([0-9a-f]+) \(the latest\)$", proc.stderr, re.M)
    assert latest, proc.stderr
    checks = "order: ENOUGH_ORDERS: passed: row count 6 satisfies the declared minimum of 1"
    assert checks in proc.stdout.splitlines(), proc.stdout
    _shown(checks)
    header = [line for line in proc.stdout.splitlines() if line.startswith("run ")]
    assert header and header[0].split() == ["run", "environment", "table", "check", "outcome", "rows", "kept",
                                            "on_failure", "finished_at"]
    listed = [line for line in proc.stdout.splitlines() if re.search(r"\border\s+ENOUGH_ORDERS\s+passed\b", line)]
    assert len(listed) == 2, proc.stdout  # the run's, then the plan's
    assert listed[0].split()[0] == latest.group(1)[:8], listed  # the short id `assay checks` takes
    assert {line.split()[1] for line in listed} == {"prod"}, listed  # the environment each run recorded
    assert "order: published" in proc.stdout.splitlines()
    assert "order order_id='O-6': 2 deliveries in bronze." in proc.stdout
    assert "It is in the entity (published). 0 open reject rows." in proc.stdout
    assert re.search(r"reject row [0-9a-f]+ for raw_orders row o-006: resolved .* \(admitted\)", proc.stdout), proc.stdout


def test_report_replay_and_maintain(walked):
    home, done = walked
    proc = done[REPORT]
    assert "wrote report.html (2 entities); open it in a browser, it needs no network" in proc.stdout
    assert (home / "lake" / "report.html").stat().st_size > 1000
    assert "order: 3 open reject rows are still in bronze and re-judged by the next build" in proc.stdout
    assert re.search(r"^silver\.order__reject: would delete 0 rows \(retention 90d, ", proc.stdout, re.M), proc.stdout
