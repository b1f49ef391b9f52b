"""The declared checks' pass on DuckDB under 000's time budget and with engine errors (decisions
0530, 0531, 0533), through the real `assay_entity` materialization in a `dbt build`.

DuckDB has neither a statement timeout nor a procedural block that catches an error, so the
materialization runs the measuring query from Python (`_declared_check_probe`) under a timer that
interrupts it. Here a model's declared checks are written by hand: `slow` measures with a query
that runs far past its 1-second budget, `broken` with one the engine refuses. Both are published
(neither check blocks on an unevaluated pass; the broken one is advisory), and the results say
`not_evaluated` with 000's time-budget sentence and `errored` with DuckDB's own message.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb
import pytest

from assay.checks.recorded import verdict_of_row
from tests.support import dbtserver

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt_package"

pytestmark = pytest.mark.slow

CHECK = ('{"check_id": "%s", "kind": "null_ceiling", "enforcement": "%s", "blocking": %s, "position": 1, '
         '"columns": ["x"], "types": ["int"], "bounds": {"max_null_ppm": 0}, "counts": {"rows": "assay_rows", '
         '"nulls": "m1_nulls"}, "texts": {}, "row_reading": true}')
MACROS = """
{% macro default__assay_audits__slow(candidate) %}{{ return([]) }}{% endmacro %}
{% macro default__assay_audits__broken(candidate) %}{{ return([]) }}{% endmacro %}

{% macro default__assay_declared__slow(candidate) %}
  {% set checks = [] %}
  {% do checks.append(""" + CHECK % ("X_PRESENT", "required", "true") + """) %}
  {% set sql %}
select count(*) as assay_rows, count(*) - count(x) + (select count(*) - count(*) from range(100000000000) as r(i)) as m1_nulls
from {{ candidate }}
  {% endset %}
  {{ return({'table': 'slow', 'results_schema': 'assay_meta', 'budget': {'scan_bytes': 68719476736, 'time_seconds': 1}, 'sql': sql, 'checks': checks}) }}
{% endmacro %}

{% macro default__assay_declared__broken(candidate) %}
  {% set checks = [] %}
  {% do checks.append(""" + CHECK % ("X_PRESENT", "advisory", "false") + """) %}
  {% set sql %}
select count(*) as assay_rows, count(*) - count(nope) as m1_nulls from {{ candidate }}
  {% endset %}
  {{ return({'table': 'broken', 'results_schema': 'assay_meta', 'budget': {'scan_bytes': 68719476736, 'time_seconds': 900}, 'sql': sql, 'checks': checks}) }}
{% endmacro %}
"""


def test_time_budget_and_engine_errors_on_duckdb(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text(
        "name: assay_measure\nversion: '0.1.0'\nconfig-version: 2\nprofile: assay_measure\n")
    (tmp_path / "profiles.yml").write_text(
        "assay_measure:\n  target: duckdb\n  outputs:\n    duckdb:\n      type: duckdb\n"
        f"      path: {json.dumps(str(tmp_path / 'warehouse.duckdb'))}\n      threads: 1\n")
    (tmp_path / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(PACKAGE))}\n")
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "declared.sql").write_text(MACROS)
    (tmp_path / "models").mkdir()
    for name in ("slow", "broken"):
        (tmp_path / "models" / f"{name}.sql").write_text(
            "{{ config(materialized='assay_entity', assay_audits='assay_audits__" + name + "') }}\n"
            "select 1 as x union all select 2 as x\n")
    started = time.monotonic()
    for args in (["deps"], ["build"]):
        dbtserver.in_project(tmp_path, *args, check=True)
    # the interrupted pass did not run its 1e11-row count to the end (that would take minutes)
    assert time.monotonic() - started < 240
    con = duckdb.connect(str(tmp_path / "warehouse.duckdb"), read_only=True)
    try:
        rows = con.execute(
            "select table_name, kind, passed, check_spec, measures from assay_meta.assay_check_results order by table_name"
        ).fetchall()
        published = con.execute(
            "select table_name from information_schema.tables where table_schema = 'main' order by 1").fetchall()
    finally:
        con.close()
    assert published == [("broken",), ("slow",)]
    got = {r[0]: (r[2], verdict_of_row(r[1], r[3], r[4]).detail) for r in rows}
    assert got["slow"] == (False, "not_evaluated: CHECK_TIME_BUDGET_EXCEEDED: the pass over the stored rows ran past "
                                  "the 1-second ceiling"), got
    passed, detail = got["broken"]
    assert passed is False
    assert detail == 'DECLARED_CHECK_UNREADABLE: Binder Error: Referenced column "nope" not found in FROM clause!', detail
