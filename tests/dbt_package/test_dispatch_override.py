"""A project can replace any audit of the `assay` package for its adapter (decision 0600): with
`dispatch: [{macro_namespace: assay, search_order: [<project>, assay]}]`, its own
`duckdb__<name>` wins over the package's `default__<name>`, also when the call comes from inside
the package (the generic test `assay_fail_rule` goes through `fail_rule_violations`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support import dbtserver

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "dbt_package"

pytestmark = pytest.mark.slow

OVERRIDDEN = ["fail_rule_violations", "key_uniqueness_violations", "conservation_count_violations"]

MACROS = """
{% macro duckdb__fail_rule_violations(relation, rule_name, flags_column) %}select 'overridden fail_rule_violations' as x{% endmacro %}
{% macro duckdb__key_uniqueness_violations(relation, columns) %}select 'overridden key_uniqueness_violations' as x{% endmacro %}
{% macro duckdb__conservation_count_violations(entity, staged, reject, mappings) %}select 'overridden conservation_count_violations' as x{% endmacro %}

{% macro show_audits() %}
  {%- do print('AUDIT ' ~ (assay.fail_rule_violations('t', 'r') | trim)) -%}
  {%- do print('AUDIT ' ~ (assay.key_uniqueness_violations('t', ['a']) | trim)) -%}
  {%- do print('AUDIT ' ~ (assay.conservation_count_violations('e', 's', none, [['m', 'src', 'b']]) | trim)) -%}
  {%- do print('AUDIT ' ~ (assay.test_assay_fail_rule('t', 'r') | trim)) -%}
{% endmacro %}
"""


def test_a_project_overrides_the_audits_for_its_adapter(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text(
        "name: override\nversion: '0.1.0'\nconfig-version: 2\nprofile: override\n"
        "dispatch:\n  - macro_namespace: assay\n    search_order: [override, assay]\n")
    (tmp_path / "profiles.yml").write_text(
        "override:\n  target: duckdb\n  outputs:\n    duckdb:\n      type: duckdb\n"
        f"      path: {json.dumps(str(tmp_path / 'o.duckdb'))}\n")
    (tmp_path / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(PACKAGE))}\n")
    (tmp_path / "macros").mkdir()
    (tmp_path / "macros" / "override.sql").write_text(MACROS)
    for args in (["deps"], ["run-operation", "show_audits"]):
        proc = dbtserver.in_project(tmp_path, *args, check=True)
    lines = [l.split("AUDIT ", 1)[1].strip() for l in proc.stdout.splitlines() if "AUDIT " in l]
    assert lines == [f"select 'overridden {name}' as x" for name in OVERRIDDEN] + [
        "select 'overridden fail_rule_violations' as x"]
