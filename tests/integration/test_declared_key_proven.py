"""A declared key_uniqueness check over the entity key is not counted again once the entity's
key audit has passed on the candidate (decision 1010): the measuring query then groups only the
rows with a NULL key part, which that audit does not judge. The results must be exactly those of
the full count, and a duplicate key (the audit fails) still records the real count."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import duckdb
import jinja2
import pytest
from click.testing import CliRunner

from assay.api import load_project
from assay.cli.main import cli
from assay.targets.dbt.declared_checks import declared_macro, declared_query
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project

ENTITIES = """\
spec_version: 1
entities:
  reading:
    grain: one row per station and minute
    key: [station, observed_at]
    fields:
      station: {type: string}
      observed_at: {type: timestamp}
      temp_c: {type: "decimal(5,1)"}
    checks:
      - {check_id: key_distinct, kind: key_uniqueness, enforcement: required, columns: [observed_at, station]}
      - {check_id: temp_distinct, kind: key_uniqueness, enforcement: advisory, columns: [temp_c]}
      - {check_id: key_and_temp, kind: key_uniqueness, enforcement: advisory, columns: [temp_c, station, observed_at]}
      - {check_id: enough_rows, kind: row_expectation, enforcement: required, min_rows: 1, max_rows: 100}
"""
MAPPING = """\
mapping_version: 1
source: raw_readings
target: reading
key:
  station: {from: "$.station"}
  observed_at: {from: "$.at", transform: [{parse_ts: ISO8601}]}
fields:
  temp_c: {from: "$.temp", transform: [{to_decimal: [5, 1]}]}
"""
# The key audit's own query (the package's default__key_uniqueness_violations).
KEY_AUDIT = ("select station, observed_at, count(*) from reading where station is not null and observed_at is not null "
             "group by station, observed_at having count(*) > 1")
# Candidates: distinct keys, NULL key parts that repeat (the audit holds, the check fails), NULL
# parts that do not repeat, a repeated non-null key (the audit fails), and no rows at all.
TABLES = {
    "distinct": [("A", "2026-03-01 00:00:00", "1.0"), ("A", "2026-03-01 00:01:00", "2.0"), ("B", "2026-03-01 00:00:00", "2.0")],
    "null_repeats": [("A", None, "1.0"), ("A", None, "1.0"), ("B", "2026-03-01 00:00:00", None), (None, None, None),
                     (None, None, "3.0"), (None, "2026-03-01 00:00:00", None), ("C", "2026-03-01 00:00:00", None)],
    "null_single": [("A", None, "1.0"), (None, "2026-03-01 00:00:00", "2.0"), ("A", "2026-03-01 00:00:00", "3.0")],
    "duplicate": [("A", "2026-03-01 00:00:00", "1.0"), ("A", "2026-03-01 00:00:00", "1.0"), ("B", None, None)],
    "empty": [],
}


@pytest.fixture(scope="module")
def spec(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("spec")
    (d / "entities.yml").write_text(ENTITIES)
    (d / "readings.yml").write_text(MAPPING)
    return d


def _render(sql: str) -> str:
    types = {"string": "VARCHAR"}
    assay = type("A", (), {"sql_type": staticmethod(lambda t: types[t])})
    return jinja2.Environment().from_string(sql).render(candidate="reading", assay=assay)


def test_the_proven_form_groups_only_null_key_parts(spec):
    entity = load_project(spec).entity("reading")
    full, descriptors = declared_query(entity)
    proven, proven_descriptors = declared_query(entity, key_proven=True)
    assert proven_descriptors == descriptors  # the same columns, read the same way
    assert "where observed_at is null or station is null group by observed_at, station" in proven
    assert "is null" not in full  # without the audit's word, the full count
    # temp_c is not the key: its check keeps the full count in both forms
    assert "from {{ candidate }} group by temp_c having" in proven
    # a tuple holding the whole key repeats only where a key part is NULL, too
    assert "where station is null or observed_at is null group by temp_c, station, observed_at" in proven
    macro = declared_macro(entity, load_project(spec))
    assert "'key_proven_sql': key_proven_sql" in macro


def test_no_proven_form_without_the_key_audit_or_over_other_columns(spec):
    project = load_project(spec)
    entity = project.entity("reading")
    subset = dataclasses.replace(entity, declared_checks=tuple(
        dataclasses.replace(c, columns=("station",)) if c.kind == "key_uniqueness" else c for c in entity.declared_checks))
    assert declared_query(subset, key_proven=True)[0] == declared_query(subset)[0]
    assert "key_proven_sql" not in declared_macro(subset, project)
    # an entity with dedupe: gets no key audit (outputs.audits_macro), so nothing is proven
    deduped = dataclasses.replace(entity, dedupe=("x",))
    assert declared_query(deduped, key_proven=True)[0] == declared_query(deduped)[0]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_the_proven_form_measures_what_the_full_count_measures(spec, table):
    entity = load_project(spec).entity("reading")
    con = duckdb.connect(":memory:")
    con.execute("create table reading (station varchar, observed_at timestamp, temp_c decimal(5,1))")
    if TABLES[table]:
        con.executemany("insert into reading values (?, ?, ?)", TABLES[table])
    full = con.execute(_render(declared_query(entity)[0])).fetchall()
    proven = con.execute(_render(declared_query(entity, key_proven=True)[0])).fetchall()
    audit_holds = not con.execute(KEY_AUDIT).fetchall()
    # The materialization runs the proven form only when the audit held; then it is exact.
    assert audit_holds == (table != "duplicate")
    if audit_holds:
        assert proven == full
    else:
        assert proven != full  # which is why it must not run then


def _wire(project, rid: str) -> dict[str, tuple[bool, str]]:
    res = CliRunner().invoke(cli, ["checks", rid, "--json", "--project", str(project.path)])
    return {r["check_id"]: (r["passed"], r["detail"]) for r in json.loads(res.stdout)}


def _run_id(project) -> str:
    return json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]


@pytest.mark.slow
def test_dbt_records_what_the_full_count_records(spec, tmp_path):
    _records_what_the_full_count_records(make_project(tmp_path / "p", spec))


@pytest.mark.slow
@pytest.mark.postgres
def test_dbt_records_what_the_full_count_records_on_postgres(spec, tmp_path, postgres_database):
    _records_what_the_full_count_records(make_project(tmp_path / "p", spec, engine="postgres",
                                                      pg=postgres_database("declared_key_proven")))


def _records_what_the_full_count_records(project):
    cols = ["station", "at", "temp"]

    # 1. Distinct keys: the audit holds, the check passes from the proven form.
    project.load_bronze([Relation("raw_readings", cols, [["A", "2026-03-01T00:00:00Z", "1.0"],
                                                         ["B", "2026-03-01T00:00:00Z", "2.0"]])])
    proc = project.dbt("build")
    assert proc.returncode == 0, proc.stdout[-3000:]
    got = _wire(project, _run_id(project))
    assert got["KEY_DISTINCT"] == (True, "key (observed_at, station) is distinct across all 2 rows, as expected")

    # 2. A key with a NULL part twice: the key audit holds (a NULL key is no identity), the
    #    declared check does not (000: NULLs are equal in DISTINCT), exactly as the full count says.
    project.load_bronze([Relation("raw_readings", cols, [["A", None, "1.0"], ["A", None, "2.0"],
                                                         ["B", "2026-03-01T00:00:00Z", "2.0"]])])
    proc = project.dbt("build")
    assert proc.returncode != 0 and "KEY_DISTINCT" in proc.stdout and "KEY_UNIQUE" not in proc.stdout, proc.stdout[-3000:]
    got = _wire(project, _run_id(project))
    assert got["KEY_DISTINCT"] == (False, "key (observed_at, station) repeats on 2 of 3 rows, first at (NULL, 'A'), "
                                          "where 0 repeats were expected")

    # 3. A duplicate key: the key audit fails, and the declared check records the real count.
    project.load_bronze([Relation("raw_readings", cols, [["A", "2026-03-01T00:00:00Z", "1.0"],
                                                         ["A", "2026-03-01T00:00:00Z", "2.0"],
                                                         ["B", "2026-03-01T00:00:00Z", "2.0"]])])
    proc = project.dbt("build")
    assert proc.returncode != 0 and "KEY_UNIQUE" in proc.stdout, proc.stdout[-3000:]
    got = _wire(project, _run_id(project))
    assert got["KEY_DISTINCT"] == (False, "key (observed_at, station) repeats on 2 of 3 rows, first at "
                                          "('2026-03-01T00:00:00Z', 'A'), where 0 repeats were expected")
