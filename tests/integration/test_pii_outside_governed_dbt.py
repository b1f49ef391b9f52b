"""No pii value leaves the governed tables through what a dbt build keeps for people to read
(docs/privacy.md), DuckDB, one `dbt build --store-failures` of a small spec:

- the kept rows of a failing check of a bronze table (`tables_version: 1`) leave out the JSON
  column a `pii` field is read from (`$.payload.nick`), whole, even where an entity also redacts a
  key inside it (`$.payload.secret`): the package put the redacted document back, pii key and all
  (decision 1155; an outside tester, session 44);
- a `fail` rule's test selects what identifies a violating row and no pii value (the pii key left
  out), so dbt's `--store-failures` copies none into `dbt_test__audit`, and it still fails with
  the audit's count (decision 1156; the same tester).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.privacy import HIDDEN
from tests.support import dbtresults
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

MARK = "PIIMARK"
ENTITIES = """\
spec_version: 1
entities:
  person:
    grain: one row per person
    key: [pid]
    fields:
      pid: {type: string, required: true}
      name: {type: string, classification: pii}
      nick: {type: string, classification: pii}
      city: {type: string}
    quarantine: {retention: 7d, redact: ["$.payload.secret"]}
  member:
    grain: one row per member
    key: [email]
    fields:
      email: {type: string, classification: pii}
      tier: {type: string}
    quarantine: {retention: 7d}
  owner:
    grain: one row per owner
    key: [email]
    fields:
      email: {type: string, classification: pii}
      visits: {type: int}
  visit:
    grain: one row per visit
    key: [vid]
    fields:
      vid: {type: string, required: true}
      email: {type: string, classification: pii}
relationships:
  - {name: visit_of_owner, from: visit, to: owner, via: {email: email}, cardinality: many_to_one}
coverage:
  - {name: every_owner_visited, relationship: visit_of_owner, min: 1, on_fail: flag}
reconcile:
  - {name: owner_visits, left: "owner.visits", right: "count(visit.vid) by email", tolerance: "0", on_fail: flag}
"""
OWNERS = """\
mapping_version: 1
source: raw_owners
target: owner
key: {email: {from: "$.email"}}
fields:
  visits: {from: "$.visits"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
VISITS = """\
mapping_version: 1
source: raw_visits
target: visit
key: {vid: {from: "$.id"}}
fields:
  email: {from: "$.email"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
PEOPLE = """\
mapping_version: 1
source: raw_people
target: person
key: {pid: {from: "$.id"}}
fields:
  name:
    from: "$.name"
    quality: [{rule: in_set, values: [a, b], on_fail: fail}]
  nick: {from: "$.payload.nick"}
  city: {from: "$.payload.city"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id", "$.tag"]
"""
MEMBERS = """\
mapping_version: 1
source: raw_members
target: member
key: {email: {from: "$.email"}}
fields:
  tier:
    from: "$.tier"
    quality: [{rule: in_set, values: [gold, silver], on_fail: fail}]
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
TABLES = """\
tables_version: 1
tables:
  bronze.raw_people:
    columns: [id, name, payload, tag]
    checks:
      - {check_id: tags_present, kind: null_ceiling, enforcement: advisory, columns: [tag], max_null_ppm: 0}
"""
META = ["_load_id", "_ingested_at", "_source_row_id"]
T1 = "2026-12-07T08:00:00Z"


def _payload(i: int) -> str:
    return json.dumps({"city": "Paris", "nick": f"{MARK}K{i}", "secret": f"{MARK}X{i}"})


PEOPLE_ROWS = [["l1", T1, "r1", "p1", f"{MARK}N1", _payload(1), "t"],   # name not in the set: the fail rule
               ["l1", T1, "r2", "p2", "a", _payload(2), None],           # no tag: the bronze check keeps it
               ["l1", T1, "r3", "p3", "b", _payload(3), "t"]]
MEMBER_ROWS = [["l1", T1, "m1", f"{MARK}E1", "gold"], ["l1", T1, "m2", f"{MARK}E2", "tin"]]
# O2 has no visit (coverage) and 5 visits recorded (reconcile): one failing group each
OWNER_ROWS = [["l1", T1, "o1", f"{MARK}O1", "1"], ["l1", T1, "o2", f"{MARK}O2", "5"]]
VISIT_ROWS = [["l1", T1, "v1", "v1", f"{MARK}O1"]]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> dict:
    from tests.support.dbtproject import make_project

    root = tmp_path_factory.mktemp("pii_outside_governed")
    spec = root / "spec"
    spec.mkdir()
    for name, text in (("entities", ENTITIES), ("people", PEOPLE), ("members", MEMBERS), ("tables", TABLES),
                       ("owners", OWNERS), ("visits", VISITS)):
        (spec / f"{name}.yml").write_text(text)
    project = make_project(root / "project", spec)
    project.load_bronze([Relation("raw_people", META + ["id", "name", "payload", "tag"], PEOPLE_ROWS),
                         Relation("raw_members", META + ["email", "tier"], MEMBER_ROWS),
                         Relation("raw_owners", META + ["email", "visits"], OWNER_ROWS),
                         Relation("raw_visits", META + ["id", "email"], VISIT_ROWS)])
    proc = project.dbt("build", "--store-failures")
    run_id = dbtresults.run_results(project)["metadata"]["invocation_id"]
    tables = project.query("select table_schema, table_name from information_schema.tables "
                           "where table_schema not in ('bronze', 'silver') order by 1, 2")
    kept = {f"{s}.{t}": project.query(f'select * from "{s}"."{t}"') for s, t in tables}
    audit = {t: project.query(f'select * from "{s}"."{t}"') for s, t in tables if s.endswith("dbt_test__audit")}
    columns = {t: [c for (c,) in project.query("select column_name from information_schema.columns where "
                                                f"table_name = '{t}' and table_schema like '%dbt_test__audit' "
                                                "order by ordinal_position")] for t in audit}
    rows = CliRunner().invoke(cli, ["check", "rows", run_id, "TAGS_PRESENT", "--json", "--project", str(project.path)])
    return {"proc": proc, "project": project, "kept": kept, "audit": audit, "columns": columns, "rows": rows,
            "results": {r["unique_id"]: r for r in dbtresults.run_results(project)["results"]}}


def test_kept_rows_of_a_bronze_check_leave_out_the_json_column_a_pii_field_reads(build):
    res = build["rows"]
    assert res.exit_code == 0, res.output
    items = json.loads(res.stdout)
    assert [i["row"]["_source_row_id"] for i in items] == ["r2"], items
    # `payload` is left out whole (nick is read from it), as `assay explain` hides it; `name` too
    assert [sorted(i["row"]) for i in items] == [["_ingested_at", "_load_id", "_source_row_id", "id", "tag"]], items
    assert MARK not in res.stdout
    stored = json.dumps(build["kept"]["assay_meta.assay_check_rows"], default=str)
    assert "r2" in stored and MARK not in stored, stored


def test_a_fail_rules_stored_failures_hold_no_pii_value(build):
    results = build["results"]
    failed = {uid.split(".")[2]: (r["status"], r["failures"]) for uid, r in results.items()
              if uid.startswith("test.") and "assay_fail_rule__" in uid}
    # the same verdict and count as before: one violating row each
    assert failed == {"assay_fail_rule__person__name_in_set": ("fail", 1),
                      "assay_fail_rule__member__tier_in_set": ("fail", 1)}, failed
    audit = build["audit"]
    assert len(audit["assay_fail_rule__person__name_in_set"]) == 1, audit
    assert len(audit["assay_fail_rule__member__tier_in_set"]) == 1, audit
    # what identifies the row and assay's verdict on it; the pii key `email` left out
    verdict = ["_route", "_failed_rules"]
    assert build["columns"]["assay_fail_rule__person__name_in_set"] == ["_source_row_id", "_load_id", "_mapping", "pid", *verdict]
    assert build["columns"]["assay_fail_rule__member__tier_in_set"] == ["_source_row_id", "_load_id", "_mapping", *verdict]
    assert audit["assay_fail_rule__member__tier_in_set"][0][0] == "m2"


def test_coverage_and_reconcile_store_their_groups_with_the_pii_key_hidden(build):
    results = build["results"]
    warned = {uid.split(".")[2]: (r["status"], r["failures"]) for uid, r in results.items()
              if uid.startswith("test.") and ("assay_coverage__" in uid or "assay_reconcile__" in uid)}
    assert warned == {"assay_coverage__every_owner_visited": ("warn", 1),
                      "assay_reconcile__owner_visits": ("warn", 1)}, warned
    audit = build["audit"]
    assert audit["assay_coverage__every_owner_visited"] == [(HIDDEN, 0)], audit
    assert [r[0] for r in audit["assay_reconcile__owner_visits"]] == [HIDDEN], audit


def test_nothing_outside_the_governed_tables_holds_a_pii_value(build):
    hits = {t: rows for t, rows in build["kept"].items() if MARK in json.dumps(rows, default=str)}
    assert not hits, hits
