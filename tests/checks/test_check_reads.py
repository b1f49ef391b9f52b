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


def test_two_entities_whose_checks_join_each_other_are_refused_at_each_file(tmp_path):
    for rel, text in SPEC.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    back = tmp_path / "checks/silver/beta/unused.sql"
    back.parent.mkdir(parents=True, exist_ok=True)
    back.write_text("select b.beta_id\nfrom silver.beta b\nwhere not exists (select 1 from alpha a where a.beta_id = b.beta_id)\n",
                    encoding="utf-8")
    res = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert res.exit_code == 1, res.output
    lines = [line.replace(f"{tmp_path}/", "") for line in res.output.splitlines() if "SQL_CHECK_INVALID" in line]
    assert lines == [
        "checks/silver/alpha/orphan.sql:4: SQL_CHECK_INVALID: check `silver.alpha/orphan` joins entity `beta`, whose own "
        "SQL check files join `alpha` (directly or through other entities); a check reads the entities it joins as built "
        "in the same run, so each would wait for the other. Keep the join in one of these checks only.",
        "checks/silver/beta/unused.sql:1: SQL_CHECK_INVALID: check `silver.beta/unused` joins entity `alpha`, whose own "
        "SQL check files join `beta` (directly or through other entities); a check reads the entities it joins as built "
        "in the same run, so each would wait for the other. Keep the join in one of these checks only.",
    ], res.output
    back.unlink()  # one direction only: valid
    assert CliRunner().invoke(cli, ["validate", str(tmp_path)]).exit_code == 0
