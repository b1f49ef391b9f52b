"""Which entities a SQL check file joins (generator/assay/lower/check_reads.py, decision 0974), and
validation's refusal of two entities whose checks join each other. The builds that depend on it:
tests/integration/test_check_joins_entity.py."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.lower.check_reads import entities_read
from tests.integration.test_check_joins_entity import SPEC

NAMES = ["alpha", "beta", "gamma"]


@pytest.mark.parametrize("sql, read", [
    ("select * from silver.alpha a join silver.beta b on a.x = b.x", ("beta",)),
    ("select * from alpha a where not exists (select 1 from beta b where b.x = a.x)", ("beta",)),
    ("select * from silver.alpha join gamma using (x) join silver.beta using (x)", ("beta", "gamma")),
    ("with beta as (select 1 as x) select * from alpha join beta using (x)", ()),      # a CTE, not the entity
    ("select * from silver.alpha a join bronze.beta b on a.x = b.x", ()),             # another schema's table
    ("select * from silver.alpha a join silver.alpha b on a.x = b.x", ()),            # only its own table
    ("select * from silver.alpha a join silver.delta d on a.x = d.x", ()),            # not an entity
    ("select * from (", ()),                                                          # does not parse
])
def test_the_entities_a_check_joins(sql, read):
    assert entities_read(sql, "silver", "alpha", "silver", NAMES) == read


def _refusal(at: str, check: str, other: str, entity: str) -> str:
    return (f"{at}: SQL_CHECK_INVALID: check `{check}` joins entity `{other}`, which itself waits for `{entity}` (its SQL "
            "check files join it, or its referential rules probe it, directly or through other entities); a check reads "
            "the entities it joins as built in the same run, so each would wait for the other. Keep the join in one of "
            "these checks only.")


def _write(root, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_two_entities_whose_checks_join_each_other_are_refused_at_each_file(tmp_path):
    _write(tmp_path, SPEC)
    back = tmp_path / "checks/silver/beta/unused.sql"
    back.parent.mkdir(parents=True, exist_ok=True)
    back.write_text("select b.beta_id\nfrom silver.beta b\nwhere not exists (select 1 from alpha a where a.beta_id = b.beta_id)\n",
                    encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert res.exit_code == 1, res.output
    lines = [line.replace(f"{tmp_path}/", "") for line in res.output.splitlines() if "SQL_CHECK_INVALID" in line]
    assert lines == [
        _refusal("checks/silver/alpha/orphan.sql:4", "silver.alpha/orphan", "beta", "alpha"),
        _refusal("checks/silver/beta/unused.sql:1", "silver.beta/unused", "alpha", "beta"),
    ], res.output
    back.unlink()  # one direction only: valid
    assert CliRunner().invoke(cli, ["validate", str(tmp_path)]).exit_code == 0


def test_a_check_joining_a_child_that_probes_its_entity_is_refused(tmp_path):
    """beta's referential rule probes alpha (beta's staged model reads alpha), so alpha's check
    cannot wait for beta."""
    files = dict(SPEC)
    files["spec/entities.yml"] = SPEC["spec/entities.yml"].replace(
        "      beta_id: {type: string, required: true}\n",
        "      beta_id: {type: string, required: true}\n      alpha_id: {type: string}\n"
        "    quality:\n      - {rule: referential, via: beta_of_alpha, on_missing: flag}\n",
    ) + ("relationships:\n  - {name: beta_of_alpha, from: beta, to: alpha, via: {alpha_id: alpha_id}, "
         "cardinality: many_to_one}\n")
    files["spec/beta.yml"] = SPEC["spec/beta.yml"].replace('key: {beta_id: {from: "$.id"}}\n',
                                                           'key: {beta_id: {from: "$.id"}}\nfields: {alpha_id: {from: "$.alpha"}}\n')
    _write(tmp_path, files)
    res = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert res.exit_code == 1, res.output
    assert [line.replace(f"{tmp_path}/", "") for line in res.output.splitlines() if "SQL_CHECK_INVALID" in line] == [
        _refusal("checks/silver/alpha/orphan.sql:4", "silver.alpha/orphan", "beta", "alpha")], res.output
