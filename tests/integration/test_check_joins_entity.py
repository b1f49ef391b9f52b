"""A SQL check file that joins another entity reads that entity as built in the same run
(decision 0974), on dbt and on SQLMesh (DuckDB), from the first build on.

`alpha`'s check `orphan` returns the alpha rows whose beta is missing. Nothing else orders alpha
after beta (no relationship), and alpha sorts first, so before 0974 the first build ran the check
before `silver.beta` existed: recorded `errored: Catalog Error: ...`. Now it is recorded as what it
found, by hand: alpha A2 names B2, which bronze never delivered, so 1 row. beta's `bad_cast` errors
in the engine: its detail is the engine's message, the same on both targets (SQLMesh recorded
DuckDB's excerpt of the query too, naming its physical table).
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

META = ["_load_id", "_ingested_at", "_source_row_id"]
SPEC = {
    "assay.yml": "name: joins\nspecs: spec\nschemas: {bronze: bronze, silver: silver, gold: gold, meta: assay_meta}\n",
    "spec/entities.yml": """spec_version: 1
entities:
  alpha:
    grain: one row per alpha
    key: [alpha_id]
    fields:
      alpha_id: {type: string, required: true}
      beta_id: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
  beta:
    grain: one row per beta
    key: [beta_id]
    fields:
      beta_id: {type: string, required: true}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
""",
    "spec/alpha.yml": """mapping_version: 1
source: raw_alpha
target: alpha
key: {alpha_id: {from: "$.id"}}
fields: {beta_id: {from: "$.beta"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
    "spec/beta.yml": """mapping_version: 1
source: raw_beta
target: beta
key: {beta_id: {from: "$.id"}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
""",
    "checks/silver/alpha/orphan.sql": """/* assay
on_failure: warn
*/
select a.alpha_id, a.beta_id from silver.alpha a left join silver.beta b on b.beta_id = a.beta_id
where b.beta_id is null
""",
    # an error of the engine is the check's result, and reads the same on both targets
    "checks/silver/beta/bad_cast.sql": """/* assay
on_failure: warn
*/
select beta_id from silver.beta where cast(beta_id as integer) > 0
""",
}
BRONZE = [
    Relation("raw_alpha", META + ["id", "beta"], [["l1", "2026-03-01T00:00:00Z", "a1", "A1", "B1"],
                                                  ["l1", "2026-03-01T00:00:00Z", "a2", "A2", "B2"]]),
    Relation("raw_beta", META + ["id"], [["l1", "2026-03-01T00:00:00Z", "b1", "B1"]]),
]
EXPECTED = [
    {"check_id": "ORPHAN", "passed": True, "detail": "returned 1 row (warned)", "scope": "alpha"},
    # DuckDB's message without its excerpt of the query (SQLMesh's named its physical table)
    {"check_id": "BAD_CAST", "passed": False, "scope": "beta",
     "detail": "errored: Conversion Error: Could not convert string 'B1' to INT32 when casting from source column beta_id"},
]


def _spec(tmp_path):
    root = tmp_path / "spec"
    for rel, text in SPEC.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _orphan(project_path):
    """The ORPHAN and BAD_CAST results of the latest run, and what `assay check rows` kept of ORPHAN."""
    res = CliRunner().invoke(cli, ["checks", "--json", "--project", str(project_path)])
    found = [r for r in json.loads(res.stdout) if r["check_id"] in ("ORPHAN", "BAD_CAST")]
    rows = CliRunner().invoke(cli, ["check", "rows", "--json", "--project", str(project_path),
                                    json.loads(CliRunner().invoke(cli, ["check", "list", "--json", "--project",
                                                                        str(project_path)]).stdout)[0]["run"], "ORPHAN"])
    return found, [r["row"] for r in json.loads(rows.stdout)]


def test_dbt_a_check_joining_another_entity_reads_it_as_built_in_the_first_build(tmp_path):
    from tests.support.dbtproject import make_project

    project = make_project(tmp_path / "proj", _spec(tmp_path))
    project.load_bronze(BRONZE)
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    # dbt runs alpha after beta because alpha depends on it: without that edge the order of the two
    # is up to dbt's scheduler (the check errored whenever alpha went first)
    nodes = json.loads((project.path / "target" / "manifest.json").read_text())["nodes"]
    alpha = next(n for n in nodes.values() if n["resource_type"] == "model" and n["name"] == "alpha")
    assert any(d.endswith(".beta") for d in alpha["depends_on"]["nodes"]), alpha["depends_on"]
    assert _orphan(project.path) == (EXPECTED, [{"alpha_id": "A2", "beta_id": "B2"}])


NO_B9 = """/* assay
on_failure: block
*/
select * from silver.beta where beta_id = 'B9'
"""


def test_dbt_an_entity_skipped_for_the_entity_its_check_joins_is_said_set_back(tmp_path):
    # beta's blocking check fails, so dbt skips alpha, whose check joins beta: alpha keeps its
    # previous rows, and `table get alpha` said `published` (an outside tester, session 42)
    from tests.support.dbtproject import make_project

    spec = _spec(tmp_path)
    (spec / "checks" / "silver" / "beta" / "no_b9.sql").write_text(NO_B9, encoding="utf-8")
    project = make_project(tmp_path / "proj", spec)
    project.load_bronze(BRONZE)
    assert project.dbt("build").returncode == 0
    alpha, beta = BRONZE
    project.load_bronze([Relation(alpha.name, alpha.columns, alpha.rows + [["l2", "2026-03-02T00:00:00Z", "a3", "A3", "B1"]]),
                         Relation(beta.name, beta.columns, beta.rows + [["l2", "2026-03-02T00:00:00Z", "b9", "B9"]])])
    assert project.dbt("build").returncode != 0
    assert sorted(project.query("select alpha_id from silver.alpha")) == [("A1",), ("A2",)]
    got = CliRunner().invoke(cli, ["table", "get", "alpha", "--json", "--project", str(project.path), "--spec", str(spec)])
    state = json.loads(got.stdout)
    assert got.exit_code == 2 and (state["state"], state["why"], state.get("upstream")) == ("set_back", "upstream_failed", "beta"), got.output


def test_sqlmesh_a_check_joining_another_entity_reads_it_as_built_in_the_first_plan(tmp_path):
    from tests.support.sqlmeshproject import make_project

    project = make_project(tmp_path / "proj", _spec(tmp_path))
    try:
        project.load_bronze(BRONZE)
        project.plan()
    finally:
        project.close()  # the CLI opens the DuckDB file itself
    assert _orphan(project.path) == (EXPECTED, [{"alpha_id": "A2", "beta_id": "B2"}])


def test_sqlmesh_an_entity_skipped_for_the_entity_its_check_joins_is_said_set_back(tmp_path):
    from tests.support.sqlmeshproject import make_project

    spec = _spec(tmp_path)
    (spec / "checks" / "silver" / "beta" / "no_b9.sql").write_text(NO_B9, encoding="utf-8")
    project = make_project(tmp_path / "proj", spec)
    try:
        project.load_bronze(BRONZE)
        project.plan()
        alpha, beta = BRONZE
        project.load_bronze([Relation(alpha.name, alpha.columns, alpha.rows + [["l2", "2026-03-02T00:00:00Z", "a3", "A3", "B1"]]),
                             Relation(beta.name, beta.columns, beta.rows + [["l2", "2026-03-02T00:00:00Z", "b9", "B9"]])])
        assert not project.run()  # beta's blocking check fails; SQLMesh skips alpha, which depends on it
    finally:
        project.close()
    got = CliRunner().invoke(cli, ["table", "get", "alpha", "--json", "--project", str(project.path), "--spec", str(spec)])
    state = json.loads(got.stdout)
    assert got.exit_code == 2 and (state["state"], state["why"], state.get("upstream")) == ("set_back", "upstream_failed", "beta"), got.output

