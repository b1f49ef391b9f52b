"""`assay plan OLD NEW --data` against the real next build and replay (issue 20 item 4, decision 1020).

One warehouse per engine (DuckDB, PostgreSQL 18), built twice with the OLD spec:
- `item` (dedupe latest_by): day 1 quarantines s2 and s3 (colour green) and s6 (size 0); day 2's
  bronze no longer holds s2 and s3 (aged out, their reject rows stay open) and brings s7 (green,
  quarantined) and s8 (a long note: flagged);
- `tag`: t2 (code c) is quarantined;
- `feed` (`materialized: incremental`): f2 (kind z) is quarantined on day 1; day 2 brings nothing new.
The NEW spec relaxes `colour_in_set` (green is a colour), tightens `size_range` (max 10 -> 5) and
`note_length_max` (5 -> 3, still a flag), turns `tag`'s `code_in_set` into a `fail` rule and
relaxes `feed`'s `kind_in_set` (z is a kind), which the incremental build does not re-judge.

`assay plan --data --json` runs; the warehouse must be unchanged afterwards (the DuckDB file's
bytes; every table's row count and checksum on PostgreSQL). Then the same steps are taken for
real: generate NEW, `dbt build`, `assay replay` for each entity of the plan's replay_scope, `dbt
build` again, and every number of the plan is compared with what the real tables say, read by
this module's own queries (entity, reject table, bronze), never through assay.plandata.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("`plan --data` against a real next build; in the fast loop test_plan_data_sqlmesh.py does the same on DuckDB and unit/test_plan_data.py covers the plan"),
]

ENTITIES = """\
spec_version: 1
entities:
  item:
    grain: one row per item, latest delivery wins
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      size: {type: int}
      colour: {type: string}
      note: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 3650d}
  tag:
    grain: one row per tag
    key: [tag_id]
    fields:
      tag_id: {type: string, required: true}
      code: {type: string}
    quarantine: {retention: 3650d}
  feed:
    grain: one row per feed entry, built incrementally
    key: [feed_id]
    materialized: incremental
    fields:
      feed_id: {type: string, required: true}
      kind: {type: string}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    quarantine: {retention: 3650d}
"""
ITEMS = """\
mapping_version: 1
source: raw_items
target: item
key:
  item_id: {from: "$.id"}
fields:
  size:
    from: "$.size"
    transform: [to_int]
    quality:
      - {rule: range, min: 1, max: 10, on_fail: quarantine}
  colour:
    from: "$.colour"
    quality:
      - {rule: in_set, values: [red, blue], on_fail: quarantine}
  note:
    from: "$.note"
    quality:
      - {rule: length, max: 5, on_fail: flag}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
TAGS = """\
mapping_version: 1
source: raw_tags
target: tag
key:
  tag_id: {from: "$.id"}
fields:
  code:
    from: "$.code"
    quality:
      - {rule: in_set, values: [a, b], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
FEEDS = """\
mapping_version: 1
source: raw_feeds
target: feed
key:
  feed_id: {from: "$.id"}
fields:
  kind:
    from: "$.kind"
    quality:
      - {rule: in_set, values: [x, y], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
NEW_FEEDS = FEEDS.replace("values: [x, y]", "values: [x, y, z]")
NEW_ITEMS = (ITEMS.replace("values: [red, blue]", "values: [red, blue, green]")
             .replace("min: 1, max: 10", "min: 1, max: 5").replace("max: 5, on_fail: flag", "max: 3, on_fail: flag"))
NEW_TAGS = TAGS.replace("values: [a, b], on_fail: quarantine", "values: [a, b], on_fail: fail")

ITEM_COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "size", "colour", "note"]
S1 = ["l1", "2026-03-01T08:00:00Z", "s1", "A", "3", "red", "ok"]
S2 = ["l1", "2026-03-01T09:00:00Z", "s2", "B", "2", "green", "ok"]
S3 = ["l1", "2026-03-01T10:00:00Z", "s3", "A", "4", "green", "ok"]  # wins A over s1, quarantined
S4 = ["l1", "2026-03-01T08:00:00Z", "s4", "C", "8", "blue", "ok"]
S5 = ["l1", "2026-03-01T08:00:00Z", "s5", "D", "2", "red", "abcd"]
S6 = ["l1", "2026-03-01T08:00:00Z", "s6", "E", "0", "red", "ok"]
S7 = ["l2", "2026-03-02T08:00:00Z", "s7", "F", "1", "green", "ok"]
S8 = ["l2", "2026-03-02T08:00:00Z", "s8", "G", "7", "red", "toolong"]
TAG_COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "code"]
FEED_ROWS = [["l1", "2026-03-01T08:00:00Z", "f1", "F1", "x"], ["l1", "2026-03-01T08:00:00Z", "f2", "F2", "z"]]
TAG_ROWS = [["l1", "2026-03-01T08:00:00Z", "t1", "T1", "a"], ["l1", "2026-03-01T08:00:00Z", "t2", "T2", "c"]]
DAYS = [[S1, S2, S3, S4, S5, S6], [S1, S4, S5, S6, S7, S8]]
RULES = {"item": ["colour_in_set", "note_length_max", "size_coercible", "size_range"], "tag": ["code_in_set"],
         "feed": ["kind_in_set"]}


# A keep check NEW adds to `item` that its kept red rows fail: the next build publishes `item` and
# keeps it, a result of the checks like the tag's fail rule, not an error of the plan (an outside
# tester, session 36: `plan --data` stopped with "the next build could not run").
ITEM_KEEP = """/* assay
on_failure: keep
*/
select item_id from silver.item where colour = 'red'
"""


def _spec(path, items: str, tags: str, feeds: str = FEEDS, keep: bool = False):
    path.mkdir(parents=True)
    (path / "entities.yml").write_text(ENTITIES)
    (path / "items.yml").write_text(items)
    (path / "tags.yml").write_text(tags)
    (path / "feeds.yml").write_text(feeds)
    if keep:
        (path / "checks" / "silver" / "item").mkdir(parents=True)
        (path / "checks" / "silver" / "item" / "no_red.sql").write_text(ITEM_KEEP)
    return path


def _rules(value) -> set:
    return set(value.split(",")) - {""} if isinstance(value, str) else set(value or ())


def _state(project) -> dict:
    """What the real tables say, per entity: open and resolved reject rows, their rules and
    disposition, the published rows' flags and load ids, and bronze's source row ids."""
    out = {}
    for entity, source in (("item", "raw_items"), ("tag", "raw_tags"), ("feed", "raw_feeds")):
        rejects = project.query(f"select reject_id, _source_row_id, resolved_at is null, resolution, failed_rules, disposition "
                                f"from silver.{entity}__reject")
        rows = project.query(f"select _source_row_id, _load_id, _quality_flags from silver.{entity}")
        out[entity] = {
            "open": {r[0]: (r[1], _rules(r[4]), r[5]) for r in rejects if r[2]},
            "resolved": {r[0]: r[3] for r in rejects if not r[2]},
            "kept": {r[0]: (r[1], _rules(r[2])) for r in rows},
            "bronze": {r[0] for r in project.query(f'select _source_row_id from bronze."{source}"')},
        }
    return out


def _fingerprint(project) -> object:
    """The DuckDB file's bytes, or every PostgreSQL table's row count and checksum."""
    if project.engine == "duckdb":
        return hashlib.sha256(project.db_path.read_bytes()).hexdigest()
    tables = project.query("select table_schema, table_name from information_schema.tables "
                           "where table_schema not in ('pg_catalog', 'information_schema') order by 1, 2")
    return {f"{s}.{t}": project.query(f'select count(*), md5(coalesce(string_agg(x::text, \'|\' order by x::text), \'\')) '
                                      f'from "{s}"."{t}" as x')[0] for s, t in tables}


def _cli(*args: str) -> dict:
    res = CliRunner().invoke(cli, list(args))
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def story(tmp_path_factory, engine):
    if engine.id == "pg15":
        pytest.skip("PostgreSQL 18 covers the PostgreSQL sandbox")
    root = tmp_path_factory.mktemp(f"plan_data_{engine.id}")
    old, new = _spec(root / "old", ITEMS, TAGS), _spec(root / "new", NEW_ITEMS, NEW_TAGS, NEW_FEEDS, keep=True)
    project = engine.dbt_project(root / "proj", old, f"plan_data_{engine.id}")
    for rows in DAYS:
        project.load_bronze([Relation("raw_items", ITEM_COLS, [list(r) for r in rows]),
                             Relation("raw_tags", TAG_COLS, [list(r) for r in TAG_ROWS]),
                             Relation("raw_feeds", TAG_COLS[:3] + ["id", "kind"], [list(r) for r in FEED_ROWS])])
        project.dbt("build", check=True)
    out = {"before": _state(project)}
    printed = _fingerprint(project)
    out["plan"] = _cli("plan", str(old), "--spec", str(new), "--project", str(project.path), "--data", "--json")
    out["unchanged"] = printed == _fingerprint(project)
    # the scratch database of a PostgreSQL plan is dropped when the plan ends
    out["scratch_left"] = [] if project.engine == "duckdb" else project.query(
        "select datname from pg_database where datname like 'assay_plan_%'")
    # the real next build, the replays in the plan's order, and the build after them
    assert not generate_dbt_project(new, project.path).report.conflicts
    out["build"] = project.dbt("build").returncode
    results = json.loads((project.path / "target" / "run_results.json").read_text())["results"]
    out["build_results"] = {r["unique_id"]: (r["status"], r.get("failures")) for r in results}
    out["after"] = _state(project)
    out["replay"] = {name: _cli("replay", name, "--spec", str(new), "--project", str(project.path), "--json")
                     for name in out["plan"]["replay_scope"]}
    out["replay_build"] = project.dbt("build").returncode
    out["final"] = _state(project)
    out.update(project=project, old=str(old), new=str(new))
    return out


def test_plan_leaves_the_warehouse_unchanged(story):
    assert story["unchanged"]
    assert story["scratch_left"] == []


def test_the_plan_prints_counts_and_names_never_a_value(story):
    said = json.dumps(story["plan"])
    assert not [v for v in ("toolong", "abcd", "green", "2026-03-0") if v in said]


def test_the_plan_names_the_scope_and_the_build(story):
    plan = story["plan"]
    assert plan["replay_scope"] == ["feed", "item", "tag"] and plan["data"]["target"] == "dbt"
    # the tag's fail rule stops the next build, for real and in the plan
    assert story["build"] != 0 and plan["data"]["build"]["ok"] is False
    assert plan["data"]["entities"]["tag"]["published"] is False and plan["data"]["entities"]["item"]["published"] is True
    # the keep check: published and kept, in the plan as in the real build
    said = {name: (e["published"], e["kept"]) for name, e in plan["data"]["entities"].items()}
    assert said == {"item": (True, True), "tag": (False, False), "feed": (True, False)}, said
    assert [status for uid, (status, _n) in story["build_results"].items() if uid.startswith("model.") and uid.endswith(".item")] == ["error"]
    # what stopped or kept each, named as the build names it (an outside tester, session 44: only
    # "NOT published" was said)
    failures = {name: e["failures"] for name, e in plan["data"]["entities"].items()}
    assert failures["feed"] == [] and [f.split(":")[0] for f in failures["item"]] == ["TABLE_KEPT"], failures
    assert failures["tag"] and all(f.startswith("assay_fail_rule__tag__") and f.endswith("failing rows") for f in failures["tag"]), failures


def test_newly_quarantined_and_leaving_rows_equal_the_real_build(story):
    before, after = story["before"], story["after"]
    for entity in ("item", "tag", "feed"):
        said = story["plan"]["data"]["entities"][entity]
        newly = set(after[entity]["open"]) - set(before[entity]["open"])
        leaving = [after[entity]["resolved"][rid] for rid in before[entity]["open"] if rid in after[entity]["resolved"]]
        assert said["newly_quarantined"] == len(newly), entity
        assert said["leave_reject"] == {"admitted": leaving.count("admitted"), "deduped": leaving.count("deduped")}, entity
    # the story's own numbers: s4 and s8 go in (size), s7 comes out (green), t2 fails
    assert story["plan"]["data"]["entities"]["item"]["newly_quarantined"] == 2
    assert story["plan"]["data"]["entities"]["item"]["leave_reject"] == {"admitted": 1, "deduped": 0}
    # the incremental entity's next build reads no new bronze row, so f2 (now a valid kind) stays
    # quarantined: the plan says what that build does, not what a full rebuild would
    assert story["plan"]["data"]["entities"]["feed"]["leave_reject"] == {"admitted": 0, "deduped": 0}
    assert story["plan"]["data"]["entities"]["feed"]["rules"]["kind_in_set"]["quarantined"] == 1


def test_each_rules_numbers_equal_the_real_build(story):
    before, after = story["before"], story["after"]
    for entity, rules in RULES.items():
        said = story["plan"]["data"]["entities"][entity]["rules"]
        in_bronze = after[entity]["bronze"]
        for rule in rules:
            # diverted now: open reject rows of a source row bronze still holds (the build judged it)
            diverted = {srid: disp for srid, fr, disp in after[entity]["open"].values() if rule in fr and srid in in_bronze}
            was = {srid for srid, fr, _ in before[entity]["open"].values() if rule in fr}
            flagged = {srid for srid, (_load, fl) in after[entity]["kept"].items() if rule in fl}
            had = {srid for srid, (_load, fl) in before[entity]["kept"].items() if rule in fl}
            quarantined = {s for s, d in diverted.items() if d == "quarantine"}
            failed = {s for s, d in diverted.items() if d == "fail"}
            got = said[rule]
            if story["plan"]["data"]["entities"][entity]["published"] is False:
                # the build stops on the entity: nothing is flagged or quarantined, the previous
                # version stays; its fail rule's test says how many rows failed
                assert (got["quarantined"], got["flagged"]) == (None, None), (entity, rule)
                tests = [v for uid, v in story["build_results"].items() if "fail_rule" in uid and entity in uid and rule in uid]
                assert [got["failed"]] == [n for status, n in tests if status == "fail"], (entity, rule, story["build_results"])
                continue
            assert (got["quarantined"], got["newly_quarantined"]) == (len(quarantined), len(quarantined - was)), (entity, rule)
            assert (got["failed"], got["newly_failed"]) == (len(failed), len(failed - was)), (entity, rule)
            assert (got["flagged"], got["newly_flagged"]) == (len(flagged), len(flagged - had)), (entity, rule)
    item = story["plan"]["data"]["entities"]["item"]["rules"]
    assert (item["size_range"]["quarantined"], item["size_range"]["newly_quarantined"]) == (3, 2)
    assert (item["note_length_max"]["flagged"], item["note_length_max"]["newly_flagged"]) == (1, 1)
    assert item["colour_in_set"]["quarantined"] == 0
    assert story["plan"]["data"]["entities"]["tag"]["rules"]["code_in_set"]["failed"] == 1


def test_what_replay_brings_back_equals_the_real_replay(story):
    for entity in ("item", "tag", "feed"):
        said = story["plan"]["data"]["entities"][entity]["replay"]
        real = story["replay"][entity]
        assert said["redelivered"] == sum(real["redelivered"].values()), entity
        assert said["superseded"] == real["superseded"] and said["in_bronze"] == real["in_bronze"], entity
        back = [srid for srid, (load, _fl) in story["final"][entity]["kept"].items() if load == "__replay__"]
        earlier = [srid for srid, (load, _fl) in story["after"][entity]["kept"].items() if load == "__replay__"]
        assert said["brought_back"] == len(back) - len(earlier), entity
        left = [story["final"][entity]["resolved"][rid] for rid in story["after"][entity]["open"]
                if rid in story["final"][entity]["resolved"]]
        assert said["leave_reject"] == {"admitted": left.count("admitted"), "deduped": left.count("deduped")}, entity
    # s2 and s3 aged out and are green: both come back (s3 wins A from s1 again)
    assert story["plan"]["data"]["entities"]["item"]["replay"]["brought_back"] == 2


def test_a_postgres_login_without_createdb_is_told_so(story, tmp_path):
    project = story["project"]
    if project.engine != "postgres":
        pytest.skip("the scratch database is PostgreSQL's")
    from assay.scaffold import postgres_profile

    role = "plan_reader"
    project.query(f"drop role if exists {role}; create role {role} login password 'pw' nocreatedb; select 1")
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    pg = project.pg
    (profiles / "profiles.yml").write_text(postgres_profile("assay_it", pg["host"], pg["port"], role, "pw", pg["dbname"]))
    printed = _fingerprint(project)
    res = CliRunner().invoke(cli, ["plan", story["old"], "--spec", story["new"], "--project", str(project.path), "--data",
                                   "--profiles-dir", str(profiles)])
    assert res.exit_code == 1, res.output
    assert "needs a login that may CREATE DATABASE" in res.output and "Traceback" not in res.output
    assert printed == _fingerprint(project)
