"""Issue 21 on the SQLMesh target: the same poisoned spec as test_inert_dbt, one real
`sqlmesh plan` on DuckDB and on PostgreSQL 18. SQLMesh does not render Jinja in assay's models, but it expands
`@macro`, `@{var}` and `@var` in model text: the poison carries those too, and must arrive verbatim
(sqlglot writes every literal; names are validated identifiers)."""

from __future__ import annotations

import os

import pytest

from tests.security.payloads import (
    BRONZE, CANARY_VALUE, CANARY_VAR, EXPECTED_FLAGS, bronze_rows, expected_rows, flags, poison, write_spec,
)
from tests.security.test_inert_dbt import CATALOGS, FIELDS, FILE_POISON
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

# Why this module also runs on PostgreSQL 15 (tests/conftest.py runs the others on DuckDB and PostgreSQL 18).
PG15 = "spec text must be inert on every PostgreSQL the project supports, 15 and 18 (issue 21's matrix)"


@pytest.fixture(scope="module")
def planned(engine, tmp_path_factory):
    """One project, one plan, the poison everywhere; (project, poison, pwned file, error or None)."""
    root = tmp_path_factory.mktemp(f"inert_sqlmesh_{engine.spec.id}")
    pwned_file = root / "pwned.csv"
    p = poison("sqlmesh", pwned_file)
    write_spec(root / "spec", p, FILE_POISON)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CANARY_VAR, CANARY_VALUE)
        project = engine.sqlmesh_project(root / "project", root / "spec", "inert_sqlmesh")
        project.load_bronze([Relation("raw_things", BRONZE, bronze_rows(p))])
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
    for schema, table in project.query(f"select table_schema, table_name from information_schema.tables where table_schema not in {CATALOGS}"):
        for row in project.query(f'select * from "{schema}"."{table}"'):
            assert not any(CANARY_VALUE in str(v) for v in row), (schema, table)
    for path in project.path.rglob("*"):
        if path.is_file() and path.suffix in (".sql", ".yaml", ".py", ".json"):
            assert CANARY_VALUE not in path.read_text(encoding="utf-8", errors="replace"), path
    assert os.environ.get(CANARY_VAR) != CANARY_VALUE  # the module restored the environment


def test_owner_and_descriptions_reach_the_model_verbatim(planned):
    project, p, _f, _e = planned
    model = project.context().get_model("silver.thing")
    assert model.owner == p
    assert model.description == p
    assert model.column_descriptions["id"] == p
