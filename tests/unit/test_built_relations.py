"""Where the operator commands read a dbt build's tables (decision 0930): `target/manifest.json`,
when it was written for this spec's schemas and this target."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.errors import ProjectError
from assay.runtime.built_relations import dbt_schemas

SCHEMAS = (("bronze", "bronze"), ("silver", "silver2"), ("gold", "gold"), ("meta", "assay_meta"))


def _project(tmp_path: Path, built_silver: str, built_gold: str = "gold", built_meta: str = "assay_meta") -> Path:
    """A dbt project whose last build wrote `order__staged` and `order` into `built_silver`, the
    quality mart into `built_gold` and the check results into `built_meta`."""
    (tmp_path / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    (tmp_path / "profiles.yml").write_text(
        f"shop:\n  target: dev\n  outputs:\n    dev: {{type: duckdb, path: {tmp_path / 'warehouse.duckdb'}, schema: main}}\n")
    nodes = {f"model.shop.{name}": {"resource_type": "model", "package_name": "shop", "name": name, "database": "warehouse",
                                    "schema": f"main_{built_silver}", "config": {"schema": built_silver}}
             for name in ("order__staged", "order")}
    for name, schema in (("mart_data_quality", built_gold), ("assay_check_results", built_meta), ("assay_events", built_meta)):
        nodes[f"model.shop.{name}"] = {"resource_type": "model", "package_name": "shop", "name": name,
                                       "database": "warehouse", "schema": f"main_{schema}", "config": {"schema": schema}}
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "manifest.json").write_text(json.dumps({"metadata": {"project_name": "shop"}, "nodes": nodes}))
    return tmp_path


def test_a_silver_schema_moved_since_the_build_is_said_not_read_as_empty(tmp_path):
    """An outside tester (session 36): after `silver: silver2` in assay.yml and `assay generate`,
    before a build, every command read the new, empty schema and said "never built" (exit 0)."""
    project = _project(tmp_path, "silver")
    with pytest.raises(ProjectError) as moved:
        dbt_schemas_of(project)
    said = str(moved.value)
    assert "wrote the staged tables into `silver`" in said and "now `silver2`" in said and "run `dbt build`" in said


@pytest.mark.parametrize("role, moved", [("gold", {"built_gold": "gold_old"}), ("meta", {"built_meta": "meta_old"})])
def test_a_gold_or_meta_schema_moved_since_the_build_is_said_not_read_as_empty(tmp_path, role, moved):
    """An outside tester (session 40): `gold: gold2` or `meta: assay_meta2` in assay.yml since the
    build, and `assay checks` said "no check results are recorded", `anomalies` "no quality history
    yet", the report "never built"."""
    project = _project(tmp_path, "silver2", **moved)
    with pytest.raises(ProjectError) as said:
        dbt_schemas_of(project)
    what = {"gold": "the quality mart into `gold_old`", "meta": "the check results into `meta_old`"}[role]
    now = {"gold": "gold schema is now `gold`", "meta": "meta schema is now `assay_meta`"}[role]
    assert f"wrote {what}" in str(said.value) and now in str(said.value) and "run `dbt build`" in str(said.value)


def test_the_manifest_of_the_spec_s_own_schemas_is_read(tmp_path):
    assert dbt_schemas_of(_project(tmp_path, "silver2"))["silver"] == "main_silver2"


def dbt_schemas_of(project: Path) -> dict:
    class _Spec:
        schemas = SCHEMAS

    return dbt_schemas(_Spec(), project)
