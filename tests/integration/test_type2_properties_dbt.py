"""A type-2 entity's history is a dbt snapshot on most adapters and an `assay_history` model on
Spark (decision 0807), one generated project for both: dbt must parse it without a warning
whichever node the adapter enables, or every build on one of them prints one (and fails under
`--warn-error`). The adapter's choice is the `assay_type2_as_snapshot` var, so both are parsed
here on DuckDB; what `dbt parse` does with the choice needs no Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

EXAMPLE_SPEC = Path(__file__).resolve().parents[2] / "examples" / "shop" / "spec"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("type2_properties"), EXAMPLE_SPEC)


@pytest.mark.parametrize("as_snapshot", [True, False], ids=["snapshot", "history_model"])
def test_the_history_parses_without_a_warning_and_carries_the_entitys_meta(project, as_snapshot):
    proc = project.dbt("--warn-error", "parse", "--vars", json.dumps({"assay_type2_as_snapshot": as_snapshot}))
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "[WARNING]" not in proc.stdout, proc.stdout[-4000:]
    manifest = json.loads((project.path / "target" / "manifest.json").read_text())
    kind = "snapshot" if as_snapshot else "model"
    node = manifest["nodes"][f"{kind}.assay_it.customer"]
    # the operator commands find an entity's history by this meta, on every adapter
    assert node["config"]["meta"]["assay_entity"] == "customer"
    assert node["config"]["meta"]["grain"]
