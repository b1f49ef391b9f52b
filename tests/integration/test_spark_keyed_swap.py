"""The `assay_keyed` materialization (decision 0801) and its swap repair (decision 0802), on DuckDB.

On Spark every reject history and incremental ledger is built by `assay_keyed`; its
engine-neutral path (rebuild beside, swap by two renames) is `default__assay_keyed`, the same
Jinja on every adapter, so it is exercised here where a build costs seconds: dbt's delete+insert
semantics over three builds, `keyed_is_incremental()`, and a swap interrupted between its two
renames (the table missing, its backup and a half-built new table left over), which the next run
must repair from the backup before it applies its own rows.
"""

from __future__ import annotations

import pytest

from tests.support.dbtproject import make_project
from tests.integration.test_multiload import SPEC

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("Spark's keyed swap path, run on DuckDB; run it when you touch assay_keyed (the Spark modules of the whole run build through it)"),
]

PROBE = """{{ config(materialized='assay_keyed', unique_key='k') }}
{% set rows = {1: [(1, 'a'), (2, 'b')], 2: [(2, 'B'), (3, 'c')], 3: [(4, 'd')]}[var('step')] %}
{% for k, v in rows %}
select {{ k }} as k, '{{ v }}' as v, {{ 'true' if assay.keyed_is_incremental() else 'false' }} as stored_before
{% if not loop.last %}union all{% endif %}
{% endfor %}
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    project = make_project(tmp_path_factory.mktemp("keyed"), SPEC)
    (project.path / "models" / "keyed_probe.sql").write_text(PROBE)
    return project


def build(project, step: int):
    project.dbt("build", "--select", "keyed_probe", "--vars", f"{{step: {step}}}", check=True)


def rows(project):
    return sorted(project.query("select k, v, stored_before from main.keyed_probe"))


def leftovers(project):
    return sorted(r[0] for r in project.query(
        "select table_name from information_schema.tables where table_name like 'keyed_probe%' and table_name <> 'keyed_probe'"))


def test_keyed_rows_replace_by_key_and_an_interrupted_swap_is_repaired(project):
    build(project, 1)
    assert rows(project) == [(1, "a", False), (2, "b", False)]
    build(project, 2)  # key 2 replaced, key 3 added, key 1 kept as stored
    assert rows(project) == [(1, "a", False), (2, "B", True), (3, "c", True)]
    assert leftovers(project) == []

    # A run died between the two renames: no table, the previous state in the backup, the new
    # state it was publishing in __assay_new, the rows it applied in __assay_stage.
    conn = project.connect()
    try:
        conn.execute("alter table main.keyed_probe rename to keyed_probe__assay_backup")
        conn.execute("create table main.keyed_probe__assay_new as select 9 as k, 'half-built' as v, true as stored_before")
        # and the stage it had written beside the table (decision 0810)
        conn.execute("create table main.keyed_probe__assay_stage as select 9 as k, 'staged' as v, true as stored_before")
    finally:
        conn.close()
    build(project, 3)
    # the backup came back, then this run's row was added; nothing is left over
    assert rows(project) == [(1, "a", False), (2, "B", True), (3, "c", True), (4, "d", True)]
    assert leftovers(project) == []
