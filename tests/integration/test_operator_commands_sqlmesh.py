"""The operator's commands on a SQLMesh project built by `sqlmesh plan` for real, on DuckDB and PG15.

The project is generated with `assay generate sqlmesh` (which records the spec), its warehouse is
found through the gateway in its config.yaml, and the commands read SQLMesh's prod environment
(the virtual-layer views in `silver`, `gold`, decision 0700). The bronze history is the dbt
story's (tests/integration/test_operator_commands_dbt.py): a plan, then a run one interval later
with a newer clean delivery of ORD-2, so explain, the report and retention are judged on the same
rows as there; only the times SQLMesh stamps (resolved_at: the run's execution time) differ.

One module-scoped build per engine: plan, run; then replay, maintain on the physical reject
table, and one more run that judges the replayed row and shows that deleting behind SQLMesh's
back is safe (its audits pass and rows still in bronze come back).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import shlex
import shutil

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.report.charts import run_date
from assay.retention import EVENTS_COLUMNS
from tests.integration.test_operator_commands_dbt import BAD_AMOUNT, CLEAN, COLS, FIX_2, HELD_2, HELD_3, OTHER
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.engines import ENGINES
from tests.support.sqlmeshproject import SQLMeshProject, make_project

# Why this module also runs on PostgreSQL 15 (tests/conftest.py runs the others on DuckDB and PostgreSQL 18).
PG15 = ("SQLMesh on PostgreSQL 15 past one plan: a `sqlmesh run` after it, replay, retention and every "
        "operator command through a PostgreSQL 15 gateway, the bad amount judged by the try_cast guard's "
        "stand-in (`@assay_install_functions()`) on each build")
# Not on PostgreSQL 18 (session 35, the suite's time): the gateway's SQL there is PostgreSQL 15's
# but for the try_cast guard, which 18 has built in; SQLMesh's plans and runs on 18 are the
# multi-load story's and the corpus's (pg18-sqlmesh), replay through a PostgreSQL gateway this
# module's PostgreSQL 15 run.
ON = [e for e in ENGINES if e.id in ("duckdb", "pg15")]
SPEC = PRECEDENCE / "spec"


def _cli(*args):
    res = CliRunner().invoke(cli, list(args))
    return res.exit_code, res.output


@pytest.fixture(scope="module", params=[pytest.param(e, marks=[pytest.mark.postgres] if e.kind == "postgres" else [], id=e.id)
                                         for e in ON])
def built(request, tmp_path_factory, pg_servers):
    """(project, state): the SQLMesh project after a plan and a run, the context closed."""
    from tests.support.engines import Engine

    spec_engine = request.param
    engine = Engine(spec_engine, pg_servers.get(spec_engine.server_label) if spec_engine.server_label else None)
    root = tmp_path_factory.mktemp(f"operator_sqlmesh_{engine.id}")
    spec = root / "spec"
    shutil.copytree(PRECEDENCE / "spec", spec)
    mapping = spec / "mapping_lines.yaml"
    mapping.write_text(mapping.read_text().replace("target: q_line\n", "target: q_line\nfreshness: {warn_after: 6h, error_after: 1d}\n"))
    project = make_project(root / "proj", spec, engine=engine.kind, pg=engine.database("operator_sqlmesh"))
    # the user's route: `assay generate sqlmesh` records the spec, so no command needs --spec
    code, out = _cli("generate", "sqlmesh", "--project", str(project.path), "--spec", str(spec), "--dialect", project.dialect)
    assert code == 0, out
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3, BAD_AMOUNT])] + OTHER)
    project.plan()
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3, BAD_AMOUNT, FIX_2])] + OTHER)
    _sqlmesh_run(project)  # DuckDB: the commands open the file themselves
    yield project
    project.close()


def _run(project: SQLMeshProject, *args):
    return _cli(*args, "--project", str(project.path))


def _query(project: SQLMeshProject, sql: str):
    """Rows of `sql`, through a connection of our own that is closed before the next command
    (a DuckDB file takes connections of one configuration at a time within a process)."""
    if project.engine == "postgres":
        return project.query(sql)
    import duckdb

    conn = duckdb.connect(str(project.path / "warehouse.duckdb"))
    try:
        return [tuple(r) for r in conn.execute(sql).fetchall()]
    finally:
        conn.close()


def _execute(project: SQLMeshProject, sql: str) -> None:
    if project.engine == "postgres":
        project.execute(sql)
        return
    import duckdb

    conn = duckdb.connect(str(project.path / "warehouse.duckdb"))
    try:
        conn.execute(sql)
    finally:
        conn.close()


def _release(project: SQLMeshProject) -> None:
    """Close the SQLMesh context and free its DuckDB connection before a command opens the file."""
    import gc

    project.close()
    gc.collect()


def _sqlmesh_run(project: SQLMeshProject) -> None:
    """`sqlmesh run` at the next interval; every model and audit passes; the connection is released."""
    import gc

    from sqlmesh.utils import CompletionStatus

    project.clock += dt.timedelta(days=1)
    try:
        # `end` too: without it a fresh Context ends the run at the wall clock, before the test's
        # intervals (a day apart, starting tomorrow), and finds nothing to do
        status = project.context().run(execution_time=project.clock, end=project.clock)
        assert status == CompletionStatus.SUCCESS, status
    finally:
        project.close()
        gc.collect()


@pytest.mark.slow
def test_operator_commands_on_sqlmesh(built):
    project = built
    _explain(project)
    _report(project)
    if project.engine == "duckdb":  # one engine is enough for the naming; it costs a plan
        _environment(project)
    _checks(project)
    _replay(project)
    _maintain(project)


@pytest.mark.slow
def test_anomalies_on_sqlmesh(built):
    """`assay anomalies` reads the mart through prod's `gold.mart_data_quality` view: the real runs
    alone are too few to judge; with 50 generated daily runs of q_line written into the view's
    physical table before them, a spike on a Wednesday is found and the real loads (a few rows
    against about 10,000) are drops, the latest failing the command with exit 2."""
    from assay.anomalies import synthetic
    from assay.anomalies.method import VOLUME
    from assay.runtime.relations import physical_table

    project = built
    code, out = _run(project, "anomalies")
    assert code == 0, out
    assert re.search(r"q_line: not enough history \(\d runs? recorded; a run is judged once 7 earlier runs can be learnt from\)", out), out

    history = synthetic.generate(50, 3, weekly=True, entity="q_line", events=(synthetic.Event(VOLUME, 30, "spike", 3.0),))
    if project.engine == "postgres":
        import psycopg2

        conn = psycopg2.connect(**project.pg)
        conn.autocommit = True
    else:
        import duckdb

        conn = duckdb.connect(str(project.path / "warehouse.duckdb"))
    try:
        # q_line's part of the mart (decision 0969): the table its runs append to, which SQLMesh owns
        schema, table = physical_table(conn, project.engine, "gold", "mart_data_quality__q_line")
        assert schema.startswith("sqlmesh__")
        synthetic.insert_rows(conn, f'"{schema}"."{table}"', history, "%s" if project.engine == "postgres" else "?")
    finally:
        conn.close()

    code, out = _run(project, "anomalies", "--entity", "q_line", "--json")
    assert code == 2, out
    doc = json.loads(out[: out.rindex("}") + 1])
    volume = [(a["run_id"], a["direction"], a["latest"]) for a in doc["anomalies"] if a["measure"] == "volume"]
    assert volume[0] == ("run-0030", "up", False)
    assert volume[-1][1:] == ("down", True) and volume[-1][0].startswith("SQLMESH")
    assert doc["anomalies"][0]["run_date"] == "2026-02-04"


def _explain(project):
    code, out = _run(project, "explain", "q_line", "ORD-2", "1")
    assert code == 0, out
    assert "q_line order_id='ORD-2', line_no='1': 2 deliveries in bronze." in out
    assert "It is in the entity (published). 0 open reject rows." in out
    assert "1. q__lines row ln_04 (load l2, ingested 2026-03-10 00:00:00): kept in the entity" in out
    assert "2. q__lines row ln_02 (load l1, ingested 2026-02-01 11:00:00): deduped" in out
    assert ("lost the dedupe to ln_04: _ingested_at '2026-03-10 00:00:00' beats '2026-02-01 11:00:00' "
            "(the latest wins; order: _ingested_at, _load_id, _source_row_id, _mapping, each descending)") in out
    assert "(deduped); first seen 2026-02-01 11:00:00, last seen 2026-02-01 11:00:00 (load l1), failed rules: status_in_set" in out

    code, out = _run(project, "explain", "q_line", "--source-row-id", "ln_05")
    assert code == 0, out
    assert "It is not in the entity: its judged delivery ln_05 was quarantined to the reject table. 1 open reject row." in out
    assert "coercion failed: amount: bronze $.amount = '12,50' did not become a decimal(38,9)" in out

    code, out = _run(project, "explain", "q_line", "ORD-2", "1", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["in_entity"] is True
    assert [(d["source_row_id"], d["route"]) for d in doc["deliveries"]] == [("ln_04", "kept"), ("ln_02", "deduped")]
    assert [(r["_source_row_id"], r["resolution"]) for r in doc["rejects"]] == [("ln_02", "deduped")]

    # --profiles-dir is dbt's: refused on a SQLMesh project with the option to use instead (exit 3)
    code, out = _run(project, "explain", "q_line", "ORD-2", "1", "--profiles-dir", str(project.path))
    assert code == 3 and "is a SQLMesh project: its warehouse is its gateway, so --profiles-dir" in out, out
    # an unknown gateway names the gateways there are (exit 1)
    code, out = _run(project, "explain", "q_line", "ORD-2", "1", "--target", "nope")
    gateway = "local" if project.engine == "duckdb" else "pg"
    assert code == 1 and f"has no gateway 'nope' (its gateways: '{gateway}')" in out, out


def _report(project):
    code, out = _run(project, "report", "--json", "--now", "2026-04-15T10:00:00Z")
    assert code == 0, out
    data = json.loads(out)
    line = next(e for e in data["entities"] if e["entity"] == "q_line")
    assert [(r["bronze"], r["kept"], r["quarantined"], r["deduped"]) for r in line["trend"]] == [(4, 1, 3, 0), (5, 2, 2, 1)]
    # the numbers are the mart's, run by run (read here with SQL of our own)
    mart = _query(project, "select run_id, rows_evaluated, rows_quarantined, rows_deduped from gold.mart_data_quality "
                           "where entity = 'q_line' and rule = '(entity)'")
    by_run = {r[0]: (int(r[1]) + int(r[3]), int(r[1]) - int(r[2]), int(r[2]), int(r[3])) for r in mart}
    assert {r["run_id"]: (r["bronze"], r["kept"], r["quarantined"], r["deduped"]) for r in line["trend"]} == by_run
    assert all(r["run_id"].startswith(("SQLMESH_PLAN: ", "SQLMESH_RUN: ")) for r in line["trend"])
    assert line["flagged"] == 0
    assert [(r["rule"], r["disposition"], r["rows_failed"]) for r in line["top_rules"]] == [
        ("amount_coercible", "quarantine", 1), ("status_in_set", "quarantine", 1)]
    example = line["top_rules"][0]["examples"][0]
    assert (example["where"], example["source_row_id"], example["raw"]["amount"]) == ("reject", "ln_05", "12,50")
    assert line["rejects"]["open"] == 2
    assert [b["rows"] for b in line["rejects"]["by_age"]] == [0, 2, 0, 0, 0]
    assert [(f["source"], f["status"]) for f in line["freshness"]] == [("q__lines", "error")]
    assert sorted(e["entity"] for e in data["entities"]) == ["q_code", "q_dup", "q_line"]

    page = project.path / "report.html"
    code, out = _run(project, "report", "--out", str(page), "--now", "2026-04-15T10:00:00Z")
    assert code == 0 and page.exists(), out
    page_text = page.read_text()
    text = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page_text)))
    for entity in ("q_code", "q_dup", "q_line"):
        assert entity in text
    # entity, bronze, kept (flagged among them), quarantined, deduped, open rejects: 5 = 2 + 2 + 1
    assert "q_line 5 2 (0 flagged) 2 1 2" in text
    # the verdict first: q_line's source is past error_after
    assert data["health"]["lines"][0]["entity"] == "q_line" and data["health"]["lines"][0]["level"] == "fail"
    top = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page_text[: page_text.index("<h2")])))
    assert data["health"]["sentence"] in top and "q_line: published" in top
    # each rule's trend over the plan and the run, dated; the explain command of an example works here too
    trend = {t["rule"]: t["runs"] for t in line["rule_trend"]}
    assert [r["rows_failed"] for r in trend["amount_coercible"]] == [1, 1]
    for run in trend["amount_coercible"]:
        assert f'class="axis-date">{" ".join(run_date(run["run_started_at"]))}</text>' in page_text
    command = example["explain"]["command"]
    assert command in text and command.startswith("assay explain q_line ORD-4 "), example
    code, out = _run(project, *shlex.split(command)[1:])
    assert code == 0 and "q__lines row ln_05" in out, out
    # SQLMesh keeps no per-audit outcome to read: the page says so instead of showing dbt's files
    assert data["tool"]["tool"] == "sqlmesh" and "SQLMesh keeps no per-audit outcome" in text


def _environment(project):
    # A development environment with nothing changed: its views (silver__dev, gold__dev) point at
    # prod's tables, so it reads the same numbers under its own names.
    try:
        project.context().plan("dev", auto_apply=True, no_prompts=True, include_unmodified=True, execution_time=project.clock)
    finally:
        _release(project)
    code, out = _run(project, "report", "--json", "--environment", "dev", "--now", "2026-04-15T10:00:00Z")
    assert code == 0, out
    line = next(e for e in json.loads(out)["entities"] if e["entity"] == "q_line")
    assert [(r["bronze"], r["kept"], r["quarantined"], r["deduped"]) for r in line["trend"]] == [(4, 1, 3, 0), (5, 2, 2, 1)]
    code, out = _run(project, "explain", "q_line", "ORD-3", "1", "--environment", "dev")
    assert code == 0 and "It is not in the entity: its judged delivery ln_03 was quarantined" in out, out
    code, out = _run(project, "maintain", "--json", "--dry-run", "--environment", "dev", "--now", "2026-05-30T10:00:01Z")
    assert code == 0, out
    dev = {e["table"]: (e["unresolved_deleted"], e["resolved_deleted"], e["unresolved_kept_in_bronze"]) for e in json.loads(out)}
    assert dev["silver__dev.q_line__reject"] == (0, 0, 2)  # both still in bronze: kept (decision 0951)
    code, out = _run(project, "report", "--json", "--environment", "nope")
    assert code == 1 and "holds no environment 'nope' of this project (no schema silver__nope); its environments: prod, dev." in out, out
    # the commands that read only the check results refuse it too (an outside tester, session 36:
    # "no check results recorded yet", exit 0)
    for args in (("check", "list"), ("checks",)):
        code, out = _run(project, *args, "--environment", "nope")
        assert code == 1 and "holds no environment 'nope'" in out, (args, out)
    # An environment a development plan made without --include-unmodified publishes the models it
    # changed only; the others resolve to prod's tables in SQLMesh, which the commands cannot follow:
    # said, not read as empty (session 36). Here `part` publishes q_line alone.
    _execute(project, "create schema silver__part")
    _execute(project, "create view silver__part.q_line as select * from silver.q_line")
    try:
        code, out = _run(project, "report", "--json", "--environment", "part")
        assert code == 1 and "environment 'part' publishes 1 of the" in out and "--include-unmodified" in out, out
    finally:
        _execute(project, "drop schema silver__part cascade")


def _checks(project):
    # Declared checks on SQLMesh are not recorded yet and this spec declares none: the commands
    # read the warehouse and say so (check list: an empty list, exit 0; checks: exit 1, the sentence).
    code, out = _run(project, "check", "list", "--json")
    assert code == 0, out
    assert json.loads(out) == []
    code, out = _run(project, "checks")
    # its only checks are `fail` rules, which record a result only when one stops a build
    assert code == 1 and "the spec's only checks are `fail` rules" in out, out


def _rejects(project):
    return sorted(_query(project, "select _source_row_id, _load_id, resolution from silver.q_line__reject"))


def _replay(project):
    # ln_03 ages out of bronze while its reject row is open: replay re-delivers it from `raw`.
    assert _rejects(project) == [("ln_02", "l1", "deduped"), ("ln_03", "l1", None), ("ln_05", "l1", None)]
    _execute(project, "delete from bronze.q__lines where _source_row_id = 'ln_03'")
    code, out = _run(project, "replay", "q_line", "--dry-run", "--json")
    assert code == 0, out
    assert json.loads(out) == {"entity": "q_line", "dry_run": True, "in_bronze": 1, "needs_full_refresh": 0, "redelivered": {"q__lines": 1}, "unrecoverable": 0,
                                "superseded": 0}
    code, out = _run(project, "replay", "q_line")
    assert code == 0, out
    assert "q_line: re-delivered 1 row into bronze.q__lines with _load_id '__replay__'" in out
    assert "next: cd " in out and " && sqlmesh plan after" in out and " && sqlmesh run at the next interval" in out
    assert _query(project, "select _source_row_id, _ingested_at from bronze.q__lines where _load_id = '__replay__'") == [
        ("ln_03", "2026-03-01T10:00:00Z")]
    # judged by the run at the end of _maintain (one run shows both: replay and retention)


def _maintain_json(project, *extra):
    code, out = _run(project, "maintain", "--json", *extra)
    assert code == 0, out
    return {e["entity"]: e for e in json.loads(out)}


def _maintain(project):
    # Bronze's own retention drops ln_05; ln_03 is in bronze as its `__replay__` delivery.
    _execute(project, "delete from bronze.q__lines where _source_row_id = 'ln_05'")
    resolved_at = _query(project, "select resolved_at from silver.q_line__reject where _source_row_id = 'ln_02'")[0][0]
    at_cutoff = _maintain_json(project, "--now", "2026-05-30T10:00:00Z")
    assert (at_cutoff["q_line"]["unresolved_deleted"], at_cutoff["q_line"]["resolved_deleted"]) == (0, 0)
    dry = _maintain_json(project, "--now", "2026-05-30T10:00:01Z", "--dry-run")
    assert (dry["q_line"]["unresolved_deleted"], dry["q_line"]["resolved_deleted"], dry["q_line"]["unresolved_kept_in_bronze"]) == (1, 0, 1)
    assert len(_rejects(project)) == 3
    done = _maintain_json(project, "--now", "2026-05-30T10:00:01Z")
    assert (done["q_line"]["unresolved_deleted"], done["q_line"]["resolved_deleted"], done["q_line"]["unresolved_kept_in_bronze"]) == (1, 0, 1)
    assert done["q_line"]["table"] == "silver.q_line__reject"  # the name users know, not the physical one
    assert _rejects(project) == [("ln_02", "l1", "deduped"), ("ln_03", "l1", None)]
    # the rows went from the physical table SQLMesh owns; the view shows the same
    # (on DuckDB the dev environment's forward-only reject table sits beside it, `...__dev`)
    physical = [r for r in _query(project, "select table_schema, table_name from information_schema.tables "
                                           "where table_name like 'silver__q_line__reject__%'") if not r[1].endswith("__dev")]
    assert len(physical) == 1 and physical[0][0] == "sqlmesh__silver", physical
    assert _query(project, f'select count(*) from "{physical[0][0]}"."{physical[0][1]}"') == [(2,)]
    again = _maintain_json(project, "--now", "2026-05-30T10:00:01Z")
    assert again["q_line"]["unresolved_deleted"] + again["q_line"]["resolved_deleted"] == 0

    later = (resolved_at + dt.timedelta(days=90, seconds=1)).isoformat()
    expired = _maintain_json(project, "--now", later)
    assert (expired["q_line"]["unresolved_deleted"], expired["q_line"]["resolved_deleted"]) == (0, 1)
    assert _rejects(project) == [("ln_03", "l1", None)]
    assert set(expired) == {"q_code", "q_dup", "q_line"}

    events = _query(project, "select event_type, table_name, cutoff, row_count, why from assay_meta.assay_events "
                             "where table_name = 'silver.q_line__reject'")
    table = ("REJECTS_EXPIRED", "silver.q_line__reject")
    assert sorted((e[:4] for e in events), key=lambda e: (e[2], e[3])) == [
        (*table, dt.datetime(2026, 3, 1, 10, 0, 0), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 1),
        (*table, resolved_at + dt.timedelta(seconds=1), 1),
    ]
    assert ("retention 90d: unresolved rows last seen before 2026-03-01 10:00:01 whose delivery bronze no longer holds, and "
            "resolved rows resolved before it; 1 unresolved row past it kept, bronze still holding its delivery") in {e[4] for e in events}
    columns = _query(project, "select column_name from information_schema.columns where table_schema = 'assay_meta' "
                              "and table_name = 'assay_events' order by ordinal_position")
    assert [c[0] for c in columns] == [name for name, _ in EVENTS_COLUMNS]

    # Deleting behind SQLMesh's back is safe: the next run's audits (conservation among them)
    # pass, and ln_05, deleted with bronze's row gone, stays deleted. The run judges the replayed
    # ln_03 (kept by retention: bronze delivers it): still pending, so quarantined again, from its
    # `__replay__` delivery, which keeps the original _ingested_at (last_seen does not move).
    _sqlmesh_run(project)
    assert _rejects(project) == [("ln_03", "__replay__", None)]
    seen = _query(project, "select distinct first_seen, last_seen from silver.q_line__reject")
    assert seen == [(dt.datetime(2026, 3, 1, 10), dt.datetime(2026, 3, 1, 10))]
    again = _maintain_json(project, "--now", "2026-05-30T10:00:01Z")
    assert (again["q_line"]["unresolved_deleted"], again["q_line"]["unresolved_kept_in_bronze"]) == (0, 1)


# ----------------------------------------------------------------------------- the new paths, no build
# Every way of not reaching a SQLMesh project's warehouse exits with the contract's code and a
# sentence naming the gateway and what to do; none needs SQLMesh to have run.


def _sqlmesh_dir(tmp_path, config: str, name: str = "config.yaml"):
    project = tmp_path / "proj"
    project.mkdir()
    (project / name).write_text(config)
    return project


def _invoke(project, *args):
    res = CliRunner().invoke(cli, [*args, "--project", str(project), "--spec", str(SPEC)])
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output
    return res.exit_code, res.output


@pytest.mark.parametrize("command", [("explain", "q_line", "ORD-1", "1"), ("report", "--json"), ("maintain", "--dry-run"),
                                     ("replay", "q_line", "--dry-run"), ("check", "list"), ("checks",)],
                         ids=lambda c: c[0] if c[0] != "check" else "check-list")
def test_a_sqlmesh_warehouse_that_was_never_built_exits_1(tmp_path, command):
    from assay.api_sqlmesh import duckdb_config

    project = _sqlmesh_dir(tmp_path, duckdb_config("warehouse.duckdb"))
    code, out = _invoke(project, *command)
    assert code == 1, out
    assert f"gateway 'local' (duckdb at warehouse.duckdb, from {project / 'config.yaml'})" in out
    assert f"the DuckDB file {project / 'warehouse.duckdb'} does not exist; run `sqlmesh plan` in the project first" in out
    assert not (project / "warehouse.duckdb").exists()  # nothing was created by looking


def test_an_unknown_gateway_lists_the_known_ones(tmp_path):
    from assay.api_sqlmesh import duckdb_config

    project = _sqlmesh_dir(tmp_path, duckdb_config("warehouse.duckdb"))
    code, out = _invoke(project, "report", "--json", "--target", "prod")
    assert code == 1 and "has no gateway 'prod' (its gateways: 'local'); pass --target with one of them" in out, out


def test_profiles_dir_on_a_sqlmesh_project_is_a_usage_error(tmp_path):
    from assay.api_sqlmesh import duckdb_config

    project = _sqlmesh_dir(tmp_path, duckdb_config("warehouse.duckdb"))
    code, out = _invoke(project, "maintain", "--profiles-dir", str(tmp_path))
    assert code == 3 and "is a SQLMesh project: its warehouse is its gateway, so --profiles-dir (a dbt option) does not apply" in out, out


def test_an_in_memory_gateway_has_nothing_to_read(tmp_path):
    project = _sqlmesh_dir(tmp_path, "gateways:\n  local:\n    connection:\n      type: duckdb\n"
                                     "default_gateway: local\nmodel_defaults:\n  dialect: duckdb\n")
    code, out = _invoke(project, "explain", "q_line", "ORD-1", "1")
    assert code == 1 and "is an in-memory DuckDB: nothing outlives `sqlmesh plan`" in out, out


def test_a_gateway_of_another_engine_is_named(tmp_path):
    # MotherDuck: SQLMesh loads it with the duckdb library, which is installed here
    project = _sqlmesh_dir(tmp_path, "gateways:\n  wh:\n    connection:\n      type: motherduck\n      database: md\n"
                                     "default_gateway: wh\nmodel_defaults:\n  dialect: duckdb\n")
    code, out = _invoke(project, "report", "--json")
    assert code == 1 and "assay talks to DuckDB and Postgres warehouses; gateway 'wh' (motherduck" in out, out
    assert "is 'motherduck'. Pass --target with a DuckDB or Postgres gateway." in out


def test_a_config_sqlmesh_cannot_load_is_a_project_problem(tmp_path):
    project = _sqlmesh_dir(tmp_path, "raise RuntimeError('no config here')\n", name="config.py")
    code, out = _invoke(project, "maintain", "--dry-run")
    assert code == 1 and "config.py cannot be loaded by SQLMesh (" in out and "so that `sqlmesh plan` can read it too" in out, out


def test_a_postgres_gateway_that_refuses_connections_is_named(tmp_path):
    from assay.api_sqlmesh import postgres_config

    project = _sqlmesh_dir(tmp_path, postgres_config("127.0.0.1", 1, "nobody", "", "nowhere"))
    code, out = _invoke(project, "explain", "q_line", "ORD-1", "1")
    assert code == 1 and "cannot connect to the warehouse of gateway 'pg' (postgres at 127.0.0.1:1/nowhere" in out, out
    assert "reachable with the gateway's settings" in out and "that `sqlmesh plan` has run in the project" in out, out


def test_the_manifest_target_decides_the_kind(tmp_path):
    from assay.runtime.warehouse import project_kind

    project = _sqlmesh_dir(tmp_path, "gateways: {}\n")
    assert project_kind(project) == "sqlmesh"
    (project / "dbt_project.yml").write_text("name: x\n")
    assert project_kind(project) == "dbt"  # both files and no manifest: dbt, whose errors say what is missing
    (project / ".assay").mkdir()
    (project / ".assay" / "manifest.json").write_text('{"files": {}, "target": "sqlmesh"}')
    assert project_kind(project) == "sqlmesh"


def test_retention_refuses_a_view_that_is_not_one_table(tmp_path):
    import duckdb

    from assay.errors import WarehouseError
    from assay.runtime.relations import physical_table

    conn = duckdb.connect(str(tmp_path / "w.duckdb"))
    try:
        conn.execute("create schema s; create schema p; create table p.t (a int); create table p.u (a int)")
        conn.execute("create view s.single as select * from p.t")
        conn.execute("create view s.joined as select t.a from p.t join p.u on t.a = u.a")
        conn.execute("create view s.filtered as select * from p.t where a > 1")
        assert physical_table(conn, "duckdb", "s", "single") == ("p", "t")
        assert physical_table(conn, "duckdb", "p", "t") == ("p", "t")
        assert physical_table(conn, "duckdb", "s", "missing") is None
        for name in ("joined", "filtered"):
            with pytest.raises(WarehouseError, match=f"s.{name} is a view that is not SQLMesh's `SELECT \\* FROM <table>`"):
                physical_table(conn, "duckdb", "s", name)
    finally:
        conn.close()


def test_a_duckdb_gateway_with_catalogs_is_attached_under_their_names(tmp_path):
    """SQLMesh's views name their catalog (`wh.sqlmesh__silver...`): the files are attached under
    the catalog names, the first is the default, so the views and retention's physical table work."""
    import duckdb

    from assay.runtime.relations import physical_table
    from assay.runtime.warehouse import Reader, connect, describe

    project = _sqlmesh_dir(tmp_path, "gateways:\n  local:\n    connection:\n      type: duckdb\n      catalogs:\n"
                                     "        wh: data/main.duckdb\ndefault_gateway: local\nmodel_defaults:\n  dialect: duckdb\n")
    (project / "data").mkdir()
    setup = duckdb.connect()
    setup.execute(f"attach '{project / 'data' / 'main.duckdb'}' as wh")
    setup.execute("create schema wh.sqlmesh__silver; create schema wh.silver")
    setup.execute("create table wh.sqlmesh__silver.silver__x__reject__1 as select 1 as a")
    setup.execute("create view wh.silver.x__reject as select * from wh.sqlmesh__silver.silver__x__reject__1")
    setup.close()
    assert "duckdb at catalogs wh=data/main.duckdb" in describe(project)
    conn, dialect = connect(project, read_only=True)
    try:
        assert conn.execute("select a from silver.x__reject").fetchall() == [(1,)]
        assert Reader(conn, dialect).query("select a from silver.x__reject") == [(1,)]
        assert physical_table(conn, dialect, "silver", "x__reject") == ("sqlmesh__silver", "silver__x__reject__1")
    finally:
        conn.close()


def test_environment_on_a_dbt_project_is_a_usage_error(tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: x\nprofile: x\n")
    code, out = _invoke(project, "report", "--json", "--environment", "dev")
    assert code == 3 and "--environment names a SQLMesh environment, and" in out and "is a dbt project" in out, out
