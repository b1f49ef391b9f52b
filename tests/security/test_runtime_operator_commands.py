"""The operator commands on a real dbt build whose schemas need quoting (issue 21, items 3, 6, 7, 11).

One small project per engine (DuckDB; PostgreSQL 18, where an unquoted `Silver` is another schema)
whose assay.yml names mixed-case schemas, built once; then every operator command runs on it and
must answer right, write only what it is for, and leave no other relation behind. Names `assay
validate` refuses (`"`, `%`, `?`, `;`) cannot reach assay.yml (tested here too), but anyone who
can create a schema can put them in information_schema: forged results tables under such names
must not show up in `assay check list` or `assay checks`, with the spec or without it (then the
build's own record says where the results are; decision 0913). `assay explain` never prints a
bronze column listed under `redact`.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.runtime.sqltext import execute, relation
from assay.runtime.warehouse import connect
from tests.support import pg
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

SCHEMAS = {"bronze": "Raw_In", "silver": "Silver", "gold": "Gold", "meta": "Assay_Meta"}
COLUMNS = ["_load_id", "_ingested_at", "_source_row_id", "id", "tier", "status", "phone"]
ROWS = [
    ["l1", "2026-01-05T08:00:00Z", "r1", "a1", "1", "open", "+44 20 0001"],
    ["l1", "2026-01-05T08:00:00Z", "r2", "a2", "3", "open", "+44 20 0002"],
    ["l1", "2026-01-05T08:00:00Z", "r3", "a3", "x", "pending", "+44 20 0003"],
]
# Schemas anyone with CREATE on the database could add, each with a results table holding a
# failing check of the project's table: a quote, `%`, `?`, `;`, and look-alikes of the meta schema.
FORGED = ['Assay_Meta" --', "x_Assay_Meta", "50%_Assay_Meta", "why?_Assay_Meta", "a;b_Assay_Meta"]

PROBE = {
    "duckdb": ["create macro assay_probe_write() as 1"],
    "postgres": ["create table public.assay_probe_writes (a int)",
                 "create function public.assay_probe_write() returns int language sql as "
                 "'insert into public.assay_probe_writes values (1); select 1'"],
}
# The SQL check file that calls it: warned on DuckDB, errored (the write refused) on PostgreSQL.
PROBE_OUTCOME = {"duckdb": "warned", "postgres": "errored"}

FILES = {
    "assay.yml": f"""
        name: hostile
        specs: spec
        schemas: {json.dumps(SCHEMAS)}
        checks: {{dir: checks, on_failure: block}}
        """,
    "spec/account.yml": """
        spec_version: 1
        entities:
          account:
            grain: one row per account
            key: [account_id]
            fields:
              account_id: {type: string, required: true}
              tier: {type: int}
              status: {type: string}
            quarantine: {retention: 30d, redact: ["$.phone"]}
            checks:
              - {check_id: enough_accounts, kind: row_expectation, enforcement: advisory, min_rows: 1}
        """,
    "spec/raw_accounts.yml": """
        mapping_version: 1
        source: raw_accounts
        target: account
        key:
          account_id: {from: "$.id", transform: [trim]}
        fields:
          tier: {from: "$.tier", transform: [to_int]}
          status:
            from: "$.status"
            quality:
              - {rule: in_set, values: [open, closed], on_fail: quarantine}
        unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id", "$.phone"]
        """,
    # A write validation cannot see (a function of the warehouse's own): on PostgreSQL the count runs
    # in a read-only transaction, so the check errors and nothing is written; DuckDB's stand-in
    # is a macro that writes nothing.
    "checks/Silver/account/probe_writes.sql": """
        /* assay
        on_failure: warn
        */
        SELECT * FROM Silver.account WHERE assay_probe_write() > 0
        """,
    # The text that closed the PostgreSQL DO block counting a check: now only a value.
    "checks/Silver/account/dollar_quote.sql": """
        SELECT * FROM Silver.account
        WHERE status = '$assay$; create table public.assay_injected (a int); do $assay$ begin'
        """,
    "checks/Silver/account/high_tier.sql": """
        /* assay
        on_failure: warn
        */
        SELECT * FROM Silver.account WHERE tier > 2
        """,
}


def _write_spec(root: Path, files: dict) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def _warehouse(project):
    """A read-write connection of the test's own, and its dialect."""
    return project.connect(), project.engine


def _load_bronze(project, rows):
    conn, dialect = _warehouse(project)
    try:
        cur = conn.cursor()
        bronze = relation(dialect, SCHEMAS["bronze"], "raw_accounts")
        execute(cur, dialect, f"create schema if not exists {relation(dialect, SCHEMAS['bronze'])}")
        execute(cur, dialect, f"drop table if exists {bronze}")
        execute(cur, dialect, f"create table {bronze} ({', '.join(relation(dialect, c) + ' varchar' for c in COLUMNS)})")
        for row in rows:
            execute(cur, dialect, f"insert into {bronze} values ({', '.join(['?'] * len(COLUMNS))})", row)
    finally:
        conn.close()


def _sql(project, sql, params=()):
    conn, dialect = _warehouse(project)
    try:
        return [tuple(r) for r in execute(conn.cursor(), dialect, sql, params).fetchall()]
    finally:
        conn.close()


def _relations(project):
    return sorted(_sql(project, "select table_schema, table_name from information_schema.tables "
                                "where table_schema not in ('pg_catalog', 'information_schema')"))


@pytest.fixture(scope="module", params=["duckdb", pytest.param("pg18", marks=pytest.mark.postgres)])
def built(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(f"hostile_{request.param}")
    spec = _write_spec(tmp / "spec", FILES)
    server_gen = None
    if request.param == "duckdb":
        project = make_project(tmp / "proj", spec, engine="duckdb")
    else:
        server_gen = pg.postgres_server("embedded")
        server = next(server_gen)
        admin = server.connect()
        admin.autocommit = True
        admin.cursor().execute('drop database if exists "assay_sec_runtime"')
        admin.cursor().execute('create database "assay_sec_runtime"')
        admin.close()
        project = make_project(tmp / "proj", spec, engine="postgres", pg={**server.params(), "dbname": "assay_sec_runtime"})
    _load_bronze(project, ROWS)
    conn, dialect = _warehouse(project)
    try:
        for sql in PROBE[dialect]:
            conn.cursor().execute(sql)
    finally:
        conn.close()
    project.dbt("build", check=True)
    yield project, spec
    if server_gen is not None:
        server_gen.close()


def _run(built, *args):
    project, spec = built
    res = CliRunner().invoke(cli, [*args, "--project", str(project.path), "--spec", str(spec)])
    # stdout only when it is the answer (JSON); stderr carries progress and the error of a failure
    return res.exit_code, (res.stdout if res.exit_code in (0, 2) else res.output)


def test_validation_refuses_schema_names_that_could_break_out(tmp_path):
    for name in ['bronze"', "bro%nze", "bro?nze", "bronze;drop"]:
        spec = _write_spec(tmp_path / name.replace("/", "_"), {**FILES, "assay.yml": FILES["assay.yml"].replace(
            '"bronze": "Raw_In"', f'"bronze": {json.dumps(name)}')})
        res = CliRunner().invoke(cli, ["validate", "--spec", str(spec)])
        assert res.exit_code != 0 and "assay.yml:" in res.output, (name, res.output)


def test_operator_commands_on_quoted_schemas(built):
    project, spec = built
    before = _relations(project)
    assert ("Silver", "account") in before and ("Assay_Meta", "assay_check_results") in before
    assert not [r for r in before if r[1] == "assay_injected"]

    # explain: right answers through the quoted names, and never the redacted bronze column.
    code, out = _run(built, "explain", "account", "a2", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["in_entity"] is True
    [delivery] = doc["deliveries"]
    assert delivery["bronze"]["tier"] == "3" and "phone" not in delivery["bronze"]
    assert "+44" not in out
    code, out = _run(built, "explain", "account", "a3")
    assert code == 0 and "quarantined because status_in_set (quarantine) fired" in out, out
    assert "+44" not in out
    code, out = _run(built, "explain", "account", "--source-row-id", "r3", "--json")
    assert code == 0 and "+44" not in out and json.loads(out)["deliveries"][0]["route"] == "quarantined", out

    # report: the numbers of the build.
    code, out = _run(built, "report", "--json")
    assert code == 0, out
    [entity] = json.loads(out)["entities"]
    assert (entity["latest"]["bronze"], entity["latest"]["kept"], entity["latest"]["quarantined"]) == (3, 2, 1)

    # checks and check list: the build's results, read from "Assay_Meta".
    code, out = _run(built, "check", "list", "--json")
    assert code == 0, out
    listed = sorted((i["check"], i["outcome"]) for i in json.loads(out))
    assert listed == [("ENOUGH_ACCOUNTS", "passed"), ("Silver.account/dollar_quote", "passed"),
                      ("Silver.account/high_tier", "warned"),
                      ("Silver.account/probe_writes", PROBE_OUTCOME[project.engine])], listed
    run = json.loads(out)[0]["run"]
    # the rows the warn check found, kept from the candidate (on PostgreSQL read read-only)
    code, out = _run(built, "check", "rows", run, "Silver.account/high_tier", "--json")
    assert code == 0, out
    assert [(r["row_number"], r["row"]["account_id"], r["row"]["tier"]) for r in json.loads(out)] == [(1, "a2", 3)]
    code, out = _run(built, "checks", "--json")
    # 000's wire shape: a SQL check file reported under its stem upper-cased (decision 0948)
    results = {r["check_id"]: r for r in json.loads(out)}
    if project.engine == "postgres":
        # the count ran read-only: the server refused the function's INSERT, and nothing was written
        assert code == 2 and "read-only transaction" in results["PROBE_WRITES"]["detail"], out
        assert _sql(project, "select count(*) from public.assay_probe_writes") == [(0,)]
    else:
        assert code == 0, out

    # the reading commands wrote nothing
    assert _relations(project) == before


def _run_unrecorded(built, *args):
    """A command without --spec: the project records none (generated through the API)."""
    project, _spec = built
    res = CliRunner().invoke(cli, [*args, "--project", str(project.path)])
    return res.exit_code, (res.stdout if res.exit_code in (0, 2) else res.output)


def test_forged_schemas_cannot_forge_a_failing_check(built):
    project, _spec = built
    code, honest = _run(built, "check", "list", "--json")
    assert code == 0, honest
    honest_checks = _run(built, "checks", "--json")
    conn, dialect = _warehouse(project)
    try:
        cur = conn.cursor()
        for name in FORGED:
            results = relation(dialect, name, "assay_check_results")
            execute(cur, dialect, f"create schema {relation(dialect, name)}")
            execute(cur, dialect, f"create table {results} as select * from {relation(dialect, 'Assay_Meta', 'assay_check_results')} where 1 = 0")
            execute(cur, dialect, f"insert into {results} (run_id, table_name, check_id, kind, enforcement, passed, row_count, "
                                  "check_spec, measures, recorded_at, check_position) select run_id, table_name, ?, kind, "
                                  "'required', false, 0, check_spec, measures, recorded_at, check_position "
                                  f"from {relation(dialect, 'Assay_Meta', 'assay_check_results')} where kind <> 'sql'",
                    (f"FORGED {name}",))
    finally:
        conn.close()
    manifest = project.path / "target" / "manifest.json"
    record = project.path / ".assay" / "manifest.json"
    kept = record.read_text(encoding="utf-8")
    try:
        code, out = _run(built, "check", "list", "--json")
        assert code == 0, out
        assert out == honest and "FORGED" not in out
        assert _run(built, "checks", "--json") == honest_checks
        # Without a spec: where dbt's manifest says the results node was built ("Assay_Meta"), and
        # nowhere else; the same answer as with the spec.
        assert _run_unrecorded(built, "check", "list", "--json") == (0, honest)
        assert _run_unrecorded(built, "checks", "--json") == honest_checks
        # Without dbt's manifest (`dbt clean`): the schemas `assay generate` recorded, mapped as the
        # project's generate_schema_name maps them.
        manifest.rename(manifest.with_suffix(".aside"))
        assert _run_unrecorded(built, "check", "list", "--json") == (0, honest)
        # With no record at all the commands refuse (exit 1) and say which flag to pass, rather
        # than read every results table the warehouse holds.
        doc = json.loads(kept)
        del doc["schemas"]
        record.write_text(json.dumps(doc), encoding="utf-8")
        for args in (["check", "list", "--json"], ["checks", "--json"], ["check", "rows", "x", "y"]):
            code, out = _run_unrecorded(built, *args)
            assert code == 1 and "pass --spec with the directory holding assay.yml" in out, out
            assert "FORGED" not in out
    finally:
        record.write_text(kept, encoding="utf-8")
        if manifest.with_suffix(".aside").exists():
            manifest.with_suffix(".aside").rename(manifest)
        conn, dialect = _warehouse(project)
        try:
            for name in FORGED:
                execute(conn.cursor(), dialect, f"drop schema {relation(dialect, name)} cascade")
        finally:
            conn.close()


def test_reading_connections_refuse_writes(built):
    project, _spec = built
    conn, dialect = connect(project.path, read_only=True)
    try:
        with pytest.raises(Exception, match="(?i)read.only"):
            execute(conn.cursor(), dialect, f"create table {relation(dialect, 'Silver', 'assay_probe')} (a int)")
    finally:
        conn.close()
    assert ("Silver", "assay_probe") not in _relations(project)


def test_replay_and_maintain_write_only_their_own_rows(built):
    project, _spec = built
    before = _relations(project)
    # a3's bronze row ages out: replay re-delivers it from the reject table's raw (phone redacted).
    _load_bronze(project, ROWS[:2])
    code, out = _run(built, "replay", "account", "--json")
    assert code == 0, out
    assert json.loads(out)["redelivered"] == {"raw_accounts": 1}
    bronze = relation("duckdb", SCHEMAS["bronze"], "raw_accounts")
    assert _sql(project, f"select _source_row_id, _load_id, id, phone from {bronze} where _load_id = ?", ("__replay__",)) == [
        ("r3", "__replay__", "a3", None)]
    # bronze delivers r3 again (its replayed row): retention keeps the reject row (decision 0951)
    code, out = _run(built, "maintain", "--now", "2099-01-01T00:00:00Z", "--json")
    assert code == 0, out
    [kept] = json.loads(out)
    assert (kept["table"], kept["unresolved_deleted"], kept["unresolved_kept_in_bronze"]) == ("Silver.account__reject", 0, 1)
    # once bronze's own retention drops it, maintain deletes it
    _load_bronze(project, ROWS[:2])
    code, out = _run(built, "maintain", "--now", "2099-01-01T00:00:00Z", "--json")
    assert code == 0, out
    [expired] = json.loads(out)
    assert (expired["table"], expired["unresolved_deleted"], expired["unresolved_kept_in_bronze"]) == ("Silver.account__reject", 1, 0)
    events = relation("duckdb", "Assay_Meta", "assay_events")
    assert sorted(_sql(project, f"select event_type, row_count from {events} where event_type = ?", ("REJECTS_EXPIRED",))) == [
        ("REJECTS_EXPIRED", 0), ("REJECTS_EXPIRED", 1)]
    after = _relations(project)
    assert [r for r in after if r not in before] in ([], [("Assay_Meta", "assay_events")])
    assert [r for r in before if r not in after] == []
