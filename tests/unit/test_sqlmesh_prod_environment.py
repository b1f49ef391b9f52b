"""Reading prod of a SQLMesh project where only development plans ran (an outside tester, session
40): every command read prod as an empty environment and said "never built" or "nothing to do";
the error for an unknown environment listed prod among those the warehouse holds."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from assay.errors import WarehouseError
from assay.runtime.sqlmesh_gateway import environment_schemas


def _warehouse(*schemas: str):
    conn = duckdb.connect(":memory:")
    for schema in schemas:
        conn.execute(f"create schema {schema}")
    return conn


def test_prod_that_no_plan_wrote_is_an_error_naming_the_environments_there_are(tmp_path: Path):
    conn = _warehouse("silver__dev", "gold__dev")
    with pytest.raises(WarehouseError) as exc:
        environment_schemas(tmp_path, "prod", {"silver": "silver", "gold": "gold"}, conn, "duckdb")
    assert "holds no prod environment of this project yet (no schema silver); its environments: dev." in str(exc.value)
    assert "run `sqlmesh plan` (prod) first" in str(exc.value)


def test_prod_is_read_where_it_exists_and_where_nothing_was_planned(tmp_path: Path):
    schemas = {"silver": "silver", "gold": "gold"}
    assert environment_schemas(tmp_path, "prod", schemas, _warehouse("silver", "silver__dev"), "duckdb") == schemas
    # a project no plan has written yet: prod reads as never built, which is what it is
    assert environment_schemas(tmp_path, "prod", schemas, _warehouse(), "duckdb") == schemas


TABLES = (("gold", "mart_data_quality"), ("silver", "order"), ("silver", "order__reject"), ("silver", "customer"))


def _published(conn, schema: str, *tables: str):
    conn.execute(f"create schema if not exists {schema}")
    for table in tables:
        conn.execute(f'create view {schema}."{table}" as select 1 as x')
    return conn


@pytest.mark.parametrize("role", ["silver", "gold"])
def test_a_schema_the_spec_moved_since_the_plan_is_said_not_read_as_never_built(tmp_path: Path, role):
    # An outside tester (session 40): `silver: silver_x` in assay.yml after a plan, and every
    # command said "never built" or "nothing to do" of a prod the last plan did publish.
    conn = _published(_warehouse("sqlmesh__silver", "sqlmesh__gold"), "silver", "order", "order__reject", "customer")
    _published(conn, "gold", "mart_data_quality")
    _published(conn, "silver__dev", "order", "order__reject", "customer")  # an environment's views: not prod
    schemas = {"silver": "silver", "gold": "gold", role: f"{role}_x"}
    with pytest.raises(WarehouseError) as exc:
        environment_schemas(tmp_path, "prod", schemas, conn, "duckdb", TABLES)
    assert (f"the spec's {role} schema `{role}_x` is not in the warehouse, but `{role}` publishes every table of it "
            f"this command reads: the spec's {role} schema moved (assay.yml) since the last plan") in str(exc.value)


def test_another_projects_schema_sharing_a_table_name_is_not_taken_for_this_ones(tmp_path: Path):
    # a project never planned, beside another whose silver holds an `order` but not this spec's `customer`
    conn = _published(_warehouse(), "silver_a", "order", "order__reject")
    schemas = {"silver": "silver_b", "gold": "gold_b"}
    assert environment_schemas(tmp_path, "prod", schemas, conn, "duckdb", TABLES) == schemas


def test_the_default_environment_is_checked_as_prod_is(tmp_path: Path):
    # Without --environment the commands read prod: the same refusals hold there (session 40's
    # fix applied to `--environment prod` only; the default path read prod unchecked)
    from assay.api import load_project
    from assay.runtime.built_relations import built_project

    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    project = load_project(Path(__file__).resolve().parents[2] / "examples" / "shop")
    with pytest.raises(WarehouseError) as exc:
        built_project(project, tmp_path, conn=_warehouse("silver__dev", "gold__dev"), dialect="duckdb")
    assert "holds no prod environment of this project yet" in str(exc.value)
    assert built_project(project, tmp_path, conn=_warehouse(), dialect="duckdb").schemas == project.schemas
