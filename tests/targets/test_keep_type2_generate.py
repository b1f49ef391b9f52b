"""What the dbt target generates for a type-2 entity a keep check can mark (decision 1127): the
history is published with the entity, so `__current` names its history, the history's gate lets a
mark of this run's own build through, and its post-hook fails the node with TABLE_KEPT after the
versions are written. A type-2 entity without a keep check is generated as before.
Real build: tests/integration/test_keep_type2_dbt.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.api import load_project
from assay.targets.dbt import generate_dbt

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
CHECK = "/* assay\non_failure: {how}\n*/\nselect customer_id from silver.customer where tier > 9\n"


def _generate(tmp_path: Path, how: str | None) -> dict[str, str]:
    spec = tmp_path / "shop"
    shutil.copytree(EXAMPLE, spec)
    if how:
        folder = spec / "checks" / "silver" / "customer"
        folder.mkdir(parents=True)
        (folder / "tier_small.sql").write_text(CHECK.format(how=how))
    return generate_dbt(load_project(spec))


def test_a_keep_check_publishes_the_history_with_the_entity(tmp_path):
    files = _generate(tmp_path, "keep")
    current = files["models/assay/customer/customer__current.sql"]
    assert "assay_history=\"customer\"" in current
    for path in ("snapshots/assay/customer.sql", "models/assay/customer/customer.sql"):
        history = files[path]
        assert "'history': true" in history, path
        assert "assay.kept_history(\\\"customer\\\", ref(\\\"customer__current\\\"), \\\"assay_meta\\\")" in history, history


@pytest.mark.parametrize("how", [None, "block", "warn"])
def test_without_a_keep_check_the_history_is_a_reader_as_before(tmp_path, how):
    files = _generate(tmp_path, how)
    assert "assay_history=" not in files["models/assay/customer/customer__current.sql"]
    for path in ("snapshots/assay/customer.sql", "models/assay/customer/customer.sql"):
        assert "'history'" not in files[path] and "kept_history" not in files[path] and "post_hook" not in files[path]
