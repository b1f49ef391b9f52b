"""A SQL check file written for PostgreSQL means on PostgreSQL what PostgreSQL means by it.

Read with DuckDB's grammar and written back for PostgreSQL, `qty / 2 = 0` became a float
division with a guarded divisor and `~` became `REGEXP_FULL_MATCH`, so a blocking check that
PostgreSQL fails passed and a partial regex match errored (an outside tester, session 42). Each
engine now reads the file with its own grammar first (checks/check_dialect.py). A real `dbt build`
and a real `sqlmesh plan` on PostgreSQL 18; the generated DuckDB spelling keeps DuckDB's meaning.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.checks.check_dialect import read_for
from tests.support.corpus import Relation

pytestmark = [pytest.mark.slow]

ENTITIES = """\
spec_version: 1
entities:
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      qty: {type: int}
"""
MAPPING = """\
mapping_version: 1
source: raw_item
target: item
key:
  item_id: {from: "$.id"}
fields:
  qty: {from: "$.qty"}
"""
CHECKS = {
    # PostgreSQL's integer division: 1 / 2 = 0, so item a is returned and the check fails
    "half_is_zero": "/* assay\non_failure: block\n*/\nselect * from silver.item where qty / 2 = 0\n",
    # PostgreSQL's `~` is a partial match: no item id holds a Z, so it passes (it errored)
    "holds_z": "/* assay\non_failure: warn\n*/\nselect * from silver.item where item_id ~ 'Z'\n",
}
BRONZE = [Relation("raw_item", ["id", "qty"], [["a", "1"], ["b", "4"]])]
EXPECTED = {"HALF_IS_ZERO": False, "HOLDS_Z": True}


def test_each_engine_reads_the_file_in_its_own_grammar():
    sql = "select * from silver.item where qty / 2 = 0 and item_id ~ 'Z'"
    assert read_for(sql, "postgres").sql(dialect="postgres") == sql.replace("select", "SELECT").replace(
        " from", " FROM").replace(" where", " WHERE").replace(" and", " AND")
    # DuckDB's own meaning stays DuckDB's: `/` divides as a float, `~` is a full match
    duck = read_for(sql, "duckdb").sql(dialect="duckdb")
    assert "qty / 2 = 0" in duck and "REGEXP_FULL_MATCH(item_id, 'Z')" in duck
    # a file PostgreSQL cannot read (DuckDB's own syntax) is read as DuckDB reads it
    assert "EXCEPT (qty)" in read_for("select * exclude (qty) from silver.item", "postgres").sql(dialect="postgres")


def _spec(root: Path) -> Path:
    spec = root / "spec"
    (spec / "checks" / "silver" / "item").mkdir(parents=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "item.yml").write_text(MAPPING)
    for name, text in CHECKS.items():
        (spec / "checks" / "silver" / "item" / f"{name}.sql").write_text(text)
    return spec


def _results(project) -> dict[str, bool]:
    rows = project.query("select check_id, passed, measures from assay_meta.assay_check_results")
    return {c.rsplit("/", 1)[-1].upper(): p for c, p, _m in rows if c.rsplit("/", 1)[-1].upper() in EXPECTED}


@pytest.mark.postgres
def test_dbt_on_postgres_judges_by_postgres_meaning(tmp_path, postgres_database):
    from tests.support.dbtproject import make_project

    project = make_project(tmp_path / "dbt", _spec(tmp_path), "postgres", postgres_database("check_dialect_dbt"))
    project.load_bronze(BRONZE)
    build = project.dbt("build")
    assert build.returncode != 0, build.stdout  # the blocking check failed: the entity is set back
    assert _results(project) == EXPECTED


@pytest.mark.postgres
def test_sqlmesh_on_postgres_judges_by_postgres_meaning(tmp_path, postgres_database):
    from tests.support.sqlmeshfailures import plan_fails
    from tests.support.sqlmeshproject import make_project

    sm = make_project(tmp_path / "sqlmesh", _spec(tmp_path), "postgres", postgres_database("check_dialect_sm"))
    try:
        sm.load_bronze(BRONZE)
        plan_fails(sm)
        assert _results(sm) == EXPECTED
    finally:
        sm.close()
