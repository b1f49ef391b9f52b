"""Issue 21 on the SQLMesh target: the same poisoned spec as test_inert_dbt, one real
`sqlmesh plan` on DuckDB and on PostgreSQL 18. SQLMesh does not render Jinja in assay's models, but it expands
`@macro`, `@{var}` and `@var` in model text: the poison carries those too, and must arrive verbatim
(sqlglot writes every literal; names are validated identifiers).

The same plan carries a SQL check file that calls a function of the warehouse that writes: on
PostgreSQL its count runs read-only and the write is refused (decision 0911). And the project
records no spec: `check list` and `checks` read the results where the generated project says,
never a look-alike schema holding a forged failing check (decision 0913)."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from assay.cli.main import cli

from tests.security.payloads import (
    BRONZE, CANARY_VALUE, CANARY_VAR, EXPECTED_FLAGS, assert_no_canary, bronze_rows, expected_rows, flags, poison, write_spec,
)
from tests.security.test_inert_dbt import CATALOGS, FIELDS, FILE_POISON
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

# Why this module also runs on PostgreSQL 15 (tests/conftest.py runs the others on DuckDB and PostgreSQL 18).
PG15 = "spec text must be inert on every PostgreSQL the project supports, 15 and 18 (issue 21's matrix)"

# A write validation cannot see (a function of the warehouse's own) in a SQL check file: on
# PostgreSQL the count runs read-only, so the server refuses the INSERT; DuckDB's stand-in writes nothing.
PROBE = {
    "duckdb": ["create or replace macro assay_probe_write() as 1"],
    "postgres": ["create table if not exists public.assay_probe_writes (a int)",
                 "create or replace function public.assay_probe_write() returns int language sql as "
                 "'insert into public.assay_probe_writes values (1); select 1'"],
}
PROBE_CHECK = "/* assay\non_failure: warn\n*/\nselect * from silver.thing where assay_probe_write() > 0\n"
PROBE_ID = "silver.thing/probe_writes"


@pytest.fixture(scope="module")
def planned(engine, tmp_path_factory):
    """One project, one plan, the poison everywhere; (project, poison, pwned file, error or None)."""
    root = tmp_path_factory.mktemp(f"inert_sqlmesh_{engine.spec.id}")
    pwned_file = root / "pwned.csv"
    p = poison("sqlmesh", pwned_file)
    write_spec(root / "spec", p, FILE_POISON)
    (root / "spec" / "checks" / "silver" / "thing" / "probe_writes.sql").write_text(PROBE_CHECK, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CANARY_VAR, CANARY_VALUE)
        project = engine.sqlmesh_project(root / "project", root / "spec", "inert_sqlmesh")
        project.load_bronze([Relation("raw_things", BRONZE, bronze_rows(p))])
        for sql in PROBE[project.engine]:
            project.execute(sql)
        error = None
        try:
            project.plan()
        except Exception as exc:  # reported by the first test, so the others still say what they see
            error = exc
    yield project, p, pwned_file, error
    project.close()


def test_the_plan_applies(planned):
    assert planned[3] is None, repr(planned[3])


def test_every_value_arrives_verbatim(planned):
    project, p, _f, _e = planned
    cols = ", ".join(FIELDS)
    rows = {r[0]: dict(zip(FIELDS, r[1:])) for r in project.query(f"select id, {cols} from silver.thing order by id")}
    assert rows == expected_rows(p)


def test_rules_compare_against_the_poison_as_data(planned):
    project, _p, _f, _e = planned
    got = {r[0]: set(flags(r[1])) for r in project.query("select id, _quality_flags from silver.thing")}
    assert got == EXPECTED_FLAGS


def test_no_table_no_file_and_no_canary(planned):
    project, _p, pwned_file, _e = planned
    assert project.query("select table_schema, table_name from information_schema.tables where table_name like 'pwned%'") == []
    assert not pwned_file.exists()
    tables = project.query(f"select table_schema, table_name from information_schema.tables where table_schema not in {CATALOGS}")
    assert_no_canary((((schema, table), project.query(f'select * from "{schema}"."{table}"')) for schema, table in tables),
                     (path for path in project.path.rglob("*") if path.is_file() and path.suffix in (".sql", ".yaml", ".py", ".json")))
    assert os.environ.get(CANARY_VAR) != CANARY_VALUE  # the module restored the environment


def test_owner_and_descriptions_reach_the_model_verbatim(planned):
    project, p, _f, _e = planned
    model = project.context().get_model("silver.thing")
    assert model.owner == p
    assert model.description == p
    assert model.column_descriptions["id"] == p


def test_a_sql_check_that_writes_is_refused_by_the_read_only_count(planned):
    """On PostgreSQL the SQL check's count runs in a read-only transaction (decision 0911): the
    server refuses the function's INSERT, the check is an errored result and nothing is written."""
    project, _p, _f, _e = planned
    [(_passed, measures)] = project.query("select passed, measures from assay_meta.assay_check_results "
                                         f"where check_id = '{PROBE_ID}'")
    if project.engine == "postgres":
        assert "cannot execute INSERT in a read-only transaction" in json.loads(measures)["error"], measures
        assert project.query("select count(*) from public.assay_probe_writes") == [(0,)]
    else:
        assert json.loads(measures)["failing_rows"] == 2, measures


def test_forged_results_schemas_are_not_read_without_a_spec(planned):
    """The project records no spec (generated through the API): `check list` and `checks` read the
    results where the generated project says the build wrote them (assay_meta), and a results table
    in a schema anyone could create, holding a failing check, is not read (decision 0913)."""
    import gc

    project, _p, _f, _e = planned
    forged = ['assay_meta" --', "x_assay_meta"] + (["Assay_Meta"] if project.engine == "postgres" else [])
    for name in forged:
        quoted = '"' + name.replace('"', '""') + '"'
        project.execute(f"create schema {quoted}")
        project.execute(f"create table {quoted}.assay_check_results as select * from assay_meta.assay_check_results")
        project.execute(f"update {quoted}.assay_check_results set check_id = 'FORGED', passed = false")
    project.close()  # DuckDB: the commands open the file read-only, which one process cannot mix
    gc.collect()
    try:
        listed = CliRunner().invoke(cli, ["check", "list", "--json", "--project", str(project.path)])
        assert listed.exit_code == 0, listed.output
        items = json.loads(listed.stdout)
        assert "FORGED" not in listed.stdout
        assert {i["check"] for i in items} >= {"POISON_DESCRIBED", PROBE_ID}
        checks = CliRunner().invoke(cli, ["checks", "--json", "--project", str(project.path)])
        # exit 2 on PostgreSQL for the errored probe only; on DuckDB every check passed or warned
        assert checks.exit_code == (2 if project.engine == "postgres" else 0), checks.output
        assert "FORGED" not in checks.stdout and "PROBE_WRITES" in {r["check_id"] for r in json.loads(checks.stdout)}
    finally:
        for name in forged:
            project.execute('drop schema "' + name.replace('"', '""') + '" cascade')
