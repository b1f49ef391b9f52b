"""`assay_history` (decision 0807) keeps the same history as dbt's own `check` snapshot.

On Spark parquet a type-2 entity's history is the `assay_history` model, because dbt's snapshot
cannot change a parquet table. Its engine-neutral path (the next history built beside the stored
one, then swapped in) is the same Jinja on every adapter, so here, on DuckDB where a build costs
seconds, one project holds a dbt snapshot and an `assay_history` model over the same changing
rows, and after every step the two tables must hold the same versions: a changed value, a value
that becomes NULL and one that stops being NULL (dbt's comparison is null-safe), a key that
vanishes (dbt's default hard_deletes: ignore, it stays current), a key that comes back, a check
column added by a spec change (dbt versions every row again), a run with no change (no version),
and `--full-refresh`, which rebuilds neither.
"""

from __future__ import annotations

import pytest

from tests.integration.test_multiload import SPEC
from tests.support.dbtproject import make_project

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("assay_history against dbt's snapshot (Spark's history path); in the fast loop test_type2.py versions a type-2 entity on both targets"),
]

# step -> rows (k, a, b); b only exists from step 4 on, when it becomes a check column
STEPS = {
    1: [(1, "x", None), (2, "y", None), (3, None, None)],
    2: [(1, "x", None), (2, "Y", None), (3, "z", None)],  # 2 changed, 3 stops being NULL
    3: [(1, None, None), (3, "z", None), (4, "w", None)],  # 1 becomes NULL, 2 vanishes, 4 is new
    4: [(1, None, "b1"), (2, "Y", "b2"), (3, "z", "b3"), (4, "w", "b4")],  # b added; 2 comes back unchanged
    5: [(1, None, "b1"), (2, "Y", "b2"), (3, "z", "b3"), (4, "w", "b4")],  # nothing changed
}

SOURCE = """{% set step = var('step') %}
{% set rows = %s[step] %}
{% for k, a, b in rows %}
select {{ k }} as k, {{ "'" ~ a ~ "'" if a is not none else 'cast(null as varchar)' }} as a
{%- if step >= 4 %}, {{ "'" ~ b ~ "'" if b is not none else 'cast(null as varchar)' }} as b{% endif %}
{% if not loop.last %}union all{% endif %}
{% endfor %}
"""
COLS = "(['a', 'b'] if var('step') >= 4 else ['a'])"
SNAPSHOT = ("{% snapshot snap_probe %}\n"
            "{{ config(unique_key=['k'], strategy='check', check_cols=" + COLS + ", target_schema='main') }}\n"
            "select * from {{ ref('probe_source') }}\n{% endsnapshot %}\n")
HISTORY = ("{{ config(materialized='assay_history', unique_key=['k'], check_cols=" + COLS + ") }}\n"
           "select * from {{ ref('probe_source') }}\n")


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    """The versions of both tables after each step, read right after it."""
    project = make_project(tmp_path_factory.mktemp("history_parity"), SPEC)
    (project.path / "models" / "probe_source.sql").write_text(SOURCE.replace("%s", repr(STEPS)))
    (project.path / "models" / "hist_probe.sql").write_text(HISTORY)
    (project.path / "snapshots").mkdir(exist_ok=True)
    (project.path / "snapshots" / "snap_probe.sql").write_text(SNAPSHOT)
    seen = {}
    for step in sorted(STEPS):
        extra = ("--full-refresh",) if step == 5 else ()
        project.dbt("build", "--select", "probe_source", "hist_probe", "snap_probe", *extra,
                    "--vars", f"{{step: {step}}}", check=True)
        seen[step] = {name: versions(project, name) for name in ("snap_probe", "hist_probe")}
    seen["leftovers"] = project.query(
        "select table_name from information_schema.tables where table_name like 'hist_probe%' and table_name <> 'hist_probe'")
    seen["timeline"] = project.query(
        "select count(*) from main.hist_probe as closed join main.hist_probe as nxt on nxt.k = closed.k "
        "and nxt.dbt_valid_from = closed.dbt_valid_to")
    seen["closed"] = project.query("select count(*) from main.hist_probe where dbt_valid_to is not null")
    seen["ids"] = project.query("select count(*), count(distinct dbt_scd_id) from main.hist_probe")
    return seen


def versions(project, table: str) -> list:
    """(k, a, b, current) of every version; b is NULL before the column exists."""
    cols = {r[0] for r in project.query(f"select column_name from information_schema.columns where table_name = '{table}'")}
    b = "b" if "b" in cols else "cast(null as varchar)"
    return sorted(project.query(f"select k, a, {b}, dbt_valid_to is null from main.{table}"), key=repr)


@pytest.mark.parametrize("step", sorted(STEPS))
def test_history_model_keeps_the_snapshots_versions(steps, step):
    assert steps[step]["hist_probe"] == steps[step]["snap_probe"]


def test_the_versions_are_dbts(steps):
    current = lambda step: sorted((v[0], v[1], v[2]) for v in steps[step]["hist_probe"] if v[3])  # noqa: E731
    assert current(1) == [(1, "x", None), (2, "y", None), (3, None, None)]
    assert current(3) == [(1, None, None), (2, "Y", None), (3, "z", None), (4, "w", None)]  # 2 vanished: still current
    # the new check column versions every row again, the unchanged 2 included
    assert current(4) == [(1, None, "b1"), (2, "Y", "b2"), (3, "z", "b3"), (4, "w", "b4")]
    assert len(steps[4]["hist_probe"]) == 3 + 2 + 2 + 4
    assert steps[5]["hist_probe"] == steps[4]["hist_probe"]  # no change, and --full-refresh rebuilds nothing


def test_a_closed_version_ends_where_the_next_begins(steps):
    # every closed version is followed by its key's next version from the same instant
    assert steps["timeline"] == steps["closed"]
    assert steps["ids"][0][0] == steps["ids"][0][1]
    assert steps["leftovers"] == []
