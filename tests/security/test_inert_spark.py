"""Issue 21 on Apache Spark (local mode, parquet): the poisoned spec of test_inert_dbt.py through
one real `dbt build` on Spark, in the test process's shared Spark process.

The same build and the same assertions as on DuckDB and PostgreSQL, but for the catalog reads:
Spark has no `information_schema`, so the tables that exist are listed with `show tables`."""

from __future__ import annotations

import pytest

from tests.security.payloads import assert_no_canary
from tests.security.test_inert_dbt import (  # noqa: F401 - the shared tests, collected here
    built,
    test_descriptions_grain_and_owner_reach_the_manifest_verbatim,
    test_every_value_arrives_verbatim,
    test_rules_compare_against_the_poison_as_data,
    test_the_build_succeeds,
    test_the_spec_file_name_is_a_comment_not_code,
)
from tests.support.spark import suite_engine  # noqa: F401 - Spark instead of the session's engines

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def _tables(project) -> list[tuple[str, str]]:
    out = []
    for (schema,) in project.query("show databases"):
        out += [(schema, r[1]) for r in project.query(f"show tables in `{schema}`") if not r[2]]
    return sorted(out)


def test_no_table_and_no_file_appeared(built):
    project, _p, pwned_file, _proc = built
    assert [t for t in _tables(project) if t[1].startswith("pwned")] == []
    assert not pwned_file.exists()


def test_no_environment_variable_was_read(built):
    project, _p, _f, _proc = built
    assert_no_canary((((schema, table), project.query(f"select * from `{schema}`.`{table}`")) for schema, table in _tables(project)),
                     (path for path in (project.path / "target").rglob("*") if path.is_file()))


def test_the_sql_check_and_the_declared_checks_ran_on_the_literal(built):
    project, _p, _f, _proc = built
    text = [" ".join(str(v) for v in r) for r in project.query("select * from assay_meta.assay_check_results")]
    assert any("poison_is_data" in t for t in text), text
    assert any("G_DESCRIBED" in t.upper() for t in text), text
