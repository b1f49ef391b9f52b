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
