"""`assay._measure_declared` on PostgreSQL (decisions 0530, 0531): the measuring query runs in a
PL/pgSQL block under the time budget's `statement_timeout`, so a pass that runs past the budget
comes back as `timeout` and a query the engine refuses as `error` with the engine's own message,
while the transaction goes on and its own `statement_timeout` is restored. Run for real by
`dbt run-operation` on PG18 and PG15 (a 3-second sleep against a 1-second budget)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import dbtserver

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt_package"

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

MACRO = """
{% macro assay_test_measure() %}
  {%- set rel = api.Relation.create(database=target.database, schema=target.schema, identifier='nothing') -%}
  {%- set budget = {'time_seconds': 1} -%}
  {#- one transaction, as in the materialization, with a timeout of its own -#}
  {%- do run_query("begin") -%}
  {%- do run_query("set local statement_timeout = '5min'") -%}
  {%- set slow = assay._measure_declared(rel, {'sql': 'select count(*) as slept from (select pg_sleep(3)) as s', 'budget': budget, 'checks': []}) -%}
  {%- set after = run_query('show statement_timeout').rows[0][0] -%}
  {%- set broken = assay._measure_declared(rel, {'sql': 'select nope from (select 1 as one) as t', 'budget': budget, 'checks': []}) -%}
  {%- set fine = assay._measure_declared(rel, {'sql': 'select 41 + 1 as answer', 'budget': budget, 'checks': []}) -%}
  {%- do run_query("commit") -%}
  {%- do print('ASSAY_MEASURED ' ~ tojson({'slow': slow, 'after': after, 'broken': broken,
                                          'fine': [fine['status'], fine['row']['answer']]})) -%}
{% endmacro %}
"""


def test_time_budget_and_errors_are_outcomes(tmp_path: Path, postgres_server) -> None:
    p = postgres_server.params()
    (tmp_path / "dbt_project.yml").write_text(
        "name: assay_measure\nversion: '0.1.0'\nconfig-version: 2\nprofile: assay_measure\n")
    (tmp_path / "profiles.yml").write_text(
        "assay_measure:\n  target: pg\n  outputs:\n    pg:\n      type: postgres\n"
        f"      host: {p['host']}\n      port: {p['port']}\n      user: {p['user']}\n"
        f"      password: {json.dumps(p.get('password', ''))}\n      dbname: {p['dbname']}\n"
        "      schema: public\n      threads: 1\n")
    (tmp_path / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(PACKAGE))}\n")
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "measure.sql").write_text(MACRO)
    out = ""
    for args in (["deps"], ["run-operation", "assay_test_measure"]):
        out = dbtserver.in_project(tmp_path, *args, check=True).stdout
    got = json.loads(next(l for l in out.splitlines() if "ASSAY_MEASURED " in l).split("ASSAY_MEASURED ", 1)[1])
    assert got["slow"] == {"status": "timeout", "message": "canceling statement due to statement timeout"}
    assert got["after"] == "5min"  # the transaction's own timeout is back
    assert got["broken"] == {"status": "error", "message": 'column "nope" does not exist'}
    assert got["fine"] == ["ok", 42]
