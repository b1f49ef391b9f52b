"""The entity audits are decided once (lower/audits.py) and find what they must on a real engine.

Small stories on DuckDB: a conserved build gives no violation in either form of the conservation
law, and a lost row, a duplicated row, a missing reject row, a duplicate key and a finished row
carrying a fail rule each give the expected count. The same queries spelled by each target (the
SQLMesh spelling expanded by the real `assay_sqlmesh` macros, the dbt spelling rendered by a real
dbt run-operation over the same tables) find the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from assay.lower.audits import COUNT, LOAD, ROW, Audited, conservation_sql, entity_audits, key_unique_sql
from assay.lower.spelling import Spelling
from tests.lower.duck_spelling import DuckSpelling

REPO = Path(__file__).resolve().parents[2]


def _entity(**changes):
    rules = (SimpleNamespace(name="must_hold", disposition="fail"), SimpleNamespace(name="looks_odd", disposition="flag"))
    base = dict(name="item", key=("item_id",), dedupe=None, materialized="table", opted_in=True, has_reject=True, rules=rules,
                mappings=(SimpleNamespace(name="m", source="src", bronze_columns=("_source_row_id", "_load_id", "_ingested_at")),),
                declared_checks=(), sql_checks=())
    return SimpleNamespace(**{**base, **changes})


ENTITY = _entity()


def _story(path: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """One build that conserves every bronze row.

    r1 kept; r2 delivered twice (L1 superseded, L2 quarantined: an open reject of L2); r3 and r7
    keys' losers; r4 kept now, its open reject row (of an earlier delivery that aged out of bronze) the
    build is about to resolve (dbt stamps it after publishing); r5 failed, with its open reject;
    r9 an open reject whose bronze row aged out (history); r6 a resolved reject. Each staged
    (ledger) row carries the fingerprint of its bronze delivery, as an incremental ledger does, and
    of its `_source_row_id` (`_row_fp`), except r4's, stored by a version of assay before it kept one."""
    con = duckdb.connect(path)
    con.execute(
        """
        create table staged as select *, hash(_source_row_id, 't' || _source_row_id || _load_id) as _bronze_fp,
          case when _source_row_id <> 'r4' then hash(_source_row_id, null::varchar) end as _row_fp from (values
          ('m', 'r1', 'L1', 1, 'kept', 'i1', []::varchar[]),
          ('m', 'r2', 'L1', 2, 'deduped', 'i2', []::varchar[]),
          ('m', 'r2', 'L2', 1, 'quarantined', 'i2', ['q_rule']),
          ('m', 'r3', 'L1', 1, 'deduped', 'i1', []::varchar[]),
          ('m', 'r7', 'L1', 1, 'deduped', 'i4', []::varchar[]),
          ('m', 'r4', 'L1', 1, 'kept', 'i4', ['looks_odd']),
          ('m', 'r5', 'L1', 1, 'failed', 'i5', ['must_hold'])
        ) as t(_mapping, _source_row_id, _load_id, _delivery_rank, _route, item_id, _failed_rules)
        """
    )
    con.execute("create table bronze_src as select _source_row_id, _load_id, 't' || _source_row_id || _load_id as _ingested_at from staged")
    con.execute(
        "create table entity as select item_id, _mapping, _source_row_id, _load_id, _failed_rules as _quality_flags "
        "from staged where _route = 'kept'"
    )
    con.execute(
        """
        create table reject as select * from (values
          ('src', 'm', 'r2', 'L2', cast(null as timestamp)),
          ('src', 'm', 'r4', 'L0', cast(null as timestamp)),
          ('src', 'm', 'r5', 'L1', cast(null as timestamp)),
          ('src', 'm', 'r9', 'L1', cast(null as timestamp)),
          ('src', 'm', 'r6', 'L1', timestamp '2026-01-01')
        ) as t(source_relation, mapping, _source_row_id, _load_id, resolved_at)
        """
    )
    return con


# Each way of breaking a build, and what it leaves broken: (conservation violations in the count
# form, in the row form, repeated keys, rows carrying the fail rule).
BREAKS = {
    "conserved": ([], (0, 0, 0, 0)),
    "resolved before the audit (SQLMesh's order)": (["update reject set resolved_at = now() where _source_row_id = 'r4'"], (0, 0, 0, 0)),
    "a kept row lost": (["delete from entity where _source_row_id = 'r4'"], (1, 1, 0, 0)),
    "a kept row written twice": (["insert into entity select * from entity where _source_row_id = 'r1'"], (1, 1, 1, 0)),
    "a diverted row without its reject": (["delete from reject where _source_row_id = 'r5'"], (1, 1, 0, 0)),
    "a diverted row also kept": (["insert into entity select item_id, _mapping, _source_row_id, _load_id, [] from staged where _source_row_id = 'r5'"], (1, 1, 0, 0)),
    "two kept rows of one key": (["update entity set item_id = 'i1' where _source_row_id = 'r4'"], (0, 0, 1, 0)),
    "a finished row carrying a fail rule": (["update entity set _quality_flags = ['must_hold'] where _source_row_id = 'r4'"], (0, 0, 0, 1)),
    # one row in place of another: the totals agree, so only the row form and the sums see it
    "a kept row replaced by a deduped one": (["delete from entity where _source_row_id = 'r4'",
                                              "insert into entity select item_id, _mapping, _source_row_id, _load_id, [] from staged "
                                              "where _source_row_id = 'r7'"], (0, 2, 0, 0)),
    "a bronze row the ledger never held": (["insert into bronze_src values ('r8', 'L2', 't8')"], (1, 1, 0, 0)),
    # r9 aged out and was replayed, and a SQLMesh plan of a spec fix diverts its `__replay__`
    # delivery again without evaluating the forward-only reject model, whose open row still names
    # L1 (decision 0986). That row describes the delivery (replay made it from its `raw`), so the
    # count form places it. The row form is an incremental ledger's, dbt's only, whose reject
    # model follows every delivery before the audit: there the row at L1 places nothing.
    "a replayed row diverted again before its reject row follows it": (
        ["insert into staged values ('m', 'r9', '__replay__', 1, 'quarantined', 'i9', ['q_rule'], null, null)",
         "insert into bronze_src values ('r9', '__replay__', 't9')"], (0, 1, 0, 0)),
    # ... but a resolved reject row places nothing: the row the fix diverts again is in no table
    "a replayed row diverted again whose reject row was resolved": (
        ["insert into staged values ('m', 'r9', '__replay__', 1, 'quarantined', 'i9', ['q_rule'], null, null)",
         "insert into bronze_src values ('r9', '__replay__', 't9')",
         "update reject set resolved_at = now() where _source_row_id = 'r9'"], (1, 1, 0, 0)),
}
# The same breaks in the load form (decision 0406): a settled load whose sums differ is one
# violation, whatever its rows did; a load bronze and the ledger do not hold alike is judged
# delivery by delivery (L2 after r8: r8 placed nowhere).
LOAD_BREAKS = {"conserved": 0, "resolved before the audit (SQLMesh's order)": 0, "a kept row lost": 1,
               "a kept row written twice": 1, "a diverted row without its reject": 1, "a diverted row also kept": 1,
               "two kept rows of one key": 0, "a finished row carrying a fail rule": 0, "a kept row replaced by a deduped one": 1,
               "a bronze row the ledger never held": 1, "a replayed row diverted again before its reject row follows it": 1,
               "a replayed row diverted again whose reject row was resolved": 1}


@pytest.mark.parametrize("label", list(BREAKS))
def test_the_load_form_finds_what_breaks_the_build(label):
    con = _story()
    for s in BREAKS[label][0]:
        con.execute(s)
    sql = conservation_sql(DuckSpelling(), _entity(materialized="incremental"), Audited("entity", "reject"), LOAD)
    assert con.execute(f"select count(*) from ({sql}) as v").fetchone()[0] == LOAD_BREAKS[label]


def test_the_load_form_groups_the_ledger_by_load_once():
    # The settled loads, the kept side and the diverted side come from one pass over the ledger
    # (lower/loads.py, route_sums), not a pass each.
    import sqlglot
    from sqlglot import exp

    sql = conservation_sql(DuckSpelling(), _entity(materialized="incremental"), Audited("entity", "reject"), LOAD)
    selects = [s for s in sqlglot.parse_one(sql, read="duckdb").find_all(exp.Select) if s.args.get("group")]
    source = lambda s: {t.name for t in (s.args.get("from") or s.args.get("from_")).find_all(exp.Table)}  # noqa: E731
    grouped = [s for s in selects if "staged" in source(s)]
    assert len(grouped) == 1
    # grouped by load and route with plain sums (the stored `_row_fp`), then those rows per load
    assert [g.sql() for g in grouped[0].args["group"].expressions] == ["_mapping", "_load_id", "_route"]
    assert "_row_fp" in grouped[0].sql()
    (loads,) = [s for s in selects if source(s) == {"assay_ledger_routes"}]
    assert {"_kept_rows", "_kept_fp", "_diverted_rows", "_diverted_fp"} <= set(loads.named_selects)


def test_the_load_form_sums_the_stored_row_fingerprints():
    # The kept side's sum is the ledger's stored `_row_fp`, not a hash computed again: a stored
    # fingerprint that is not its row's breaks the settled load (r4 has none: it is hashed).
    sql = conservation_sql(DuckSpelling(), _entity(materialized="incremental"), Audited("entity", "reject"), LOAD)
    con = _story()
    assert con.execute(sql).fetchall() == []
    con.execute("update staged set _row_fp = _row_fp + 1 where _source_row_id = 'r1'")
    assert con.execute(sql).fetchall() == [("src", None, "L1", None)]


def test_the_load_form_judges_an_unsettled_load_delivery_by_delivery():
    con = _story()
    con.execute("insert into bronze_src values ('r8', 'L2', 't8')")  # L2 no longer settles
    con.execute("delete from reject where _source_row_id = 'r5'")  # L1 (settled): its sums differ
    sql = conservation_sql(DuckSpelling(), _entity(materialized="incremental"), Audited("entity", "reject"), LOAD)
    assert sorted(con.execute(sql).fetchall(), key=str) == [("src", "r8", "L2", 0), ("src", None, "L1", None)]
    # a ledger row without a fingerprint (stored before the ledger kept them) unsettles its load
    con = _story()
    con.execute("update staged set _bronze_fp = null where _source_row_id = 'r1'")
    con.execute("delete from entity where _source_row_id = 'r1'")
    assert con.execute(sql).fetchall() == [("src", "r1", "L1", 0)]


def test_the_load_form_keeps_two_mappings_apart():
    """Two mappings, each reading its own source, both with a load `L1`: each (mapping, load) is
    settled and summed on its own, and a reject row is matched to its mapping by its source."""
    meta = ("_source_row_id", "_load_id", "_ingested_at")
    entity = _entity(materialized="incremental", mappings=(SimpleNamespace(name="m", source="src", bronze_columns=meta),
                                                           SimpleNamespace(name="m2", source="src2", bronze_columns=meta)))
    assert entity_audits(DuckSpelling(), entity, Audited("entity", "reject"))[0].form == LOAD
    con = _story()
    con.execute("""insert into staged select *, hash(_source_row_id, 't' || _source_row_id || _load_id),
        hash(_source_row_id, null::varchar) from (values
        ('m2', 's1', 'L1', 1, 'kept', 'i7', []::varchar[]), ('m2', 's2', 'L1', 1, 'quarantined', 'i8', ['q_rule']))
        as t(_mapping, _source_row_id, _load_id, _delivery_rank, _route, item_id, _failed_rules)""")
    con.execute("create table bronze_src2 as select _source_row_id, _load_id, 't' || _source_row_id || _load_id as _ingested_at "
                "from staged where _mapping = 'm2'")
    con.execute("insert into entity select item_id, _mapping, _source_row_id, _load_id, _failed_rules from staged where _source_row_id = 's1'")
    con.execute("insert into reject values ('src2', 'm2', 's2', 'L1', null)")
    sql = conservation_sql(DuckSpelling(), entity, Audited("entity", "reject"), LOAD)
    assert con.execute(sql).fetchall() == []
    # m2's kept row lost: only m2's L1 breaks
    con.execute("delete from entity where _source_row_id = 's1'")
    assert con.execute(sql).fetchall() == [("src2", None, "L1", None)]
    # m's reject row recorded under m2's source describes no delivery m2 diverts: m's L1 breaks, m2's holds
    con.execute("insert into entity select item_id, _mapping, _source_row_id, _load_id, _failed_rules from staged where _source_row_id = 's1'")
    con.execute("update reject set source_relation = 'src2' where _source_row_id = 'r5'")
    assert sorted(con.execute(sql).fetchall()) == [("src", None, "L1", None)]


def _counts(con, sp: Spelling, entity, render=lambda sql: sql) -> tuple:
    where = Audited("entity", "reject")
    n = lambda sql: con.execute(f"select count(*) from ({render(sql)}) as v").fetchone()[0]  # noqa: E731
    audits = {a.name: a for a in entity_audits(sp, entity, where)}
    return (
        n(conservation_sql(sp, entity, where, COUNT)),
        n(conservation_sql(sp, entity, where, ROW)),
        n(audits["key_unique"].sql),
        n(audits["fail_rule__must_hold"].sql),
    )


@pytest.mark.parametrize("label", list(BREAKS))
def test_each_audit_finds_what_breaks_the_build(label):
    statements, expected = BREAKS[label]
    con = _story()
    for s in statements:
        con.execute(s)
    assert _counts(con, DuckSpelling(), ENTITY) == expected


def test_the_row_form_names_the_misplaced_deliveries():
    con = _story()
    con.execute("delete from entity where _source_row_id = 'r4'")
    con.execute("insert into entity select * from entity where _source_row_id = 'r1'")
    rows = con.execute(conservation_sql(DuckSpelling(), ENTITY, Audited("entity", "reject"), ROW)).fetchall()
    assert sorted(rows) == [("src", "r1", "L1", 2), ("src", "r4", "L1", 0)]


def test_an_entity_without_a_reject_table():
    """No reject table: every diverted row breaks the law (there is nowhere to put it)."""
    entity = _entity(opted_in=False, has_reject=False, rules=())
    con = _story()
    where = Audited("entity")
    for form, broken in ((COUNT, 1), (ROW, 2)):  # the row form names both diverted deliveries
        assert con.execute(f"select count(*) from ({conservation_sql(DuckSpelling(), entity, where, form)})").fetchone()[0] == broken
    con.execute("delete from staged where _route in ('quarantined', 'failed')")
    con.execute("delete from bronze_src where _source_row_id = 'r5' or (_source_row_id = 'r2' and _load_id = 'L2')")
    for form in (COUNT, ROW):
        assert con.execute(f"select count(*) from ({conservation_sql(DuckSpelling(), entity, where, form)})").fetchone()[0] == 0
    assert [a.name for a in entity_audits(DuckSpelling(), entity, where)] == ["conservation", "key_unique"]


def test_the_list_is_decided_once():
    """Which audits an entity gets and the form of its law: the same for every spelling."""
    where = Audited("entity", "reject")
    names = lambda e: [(a.name, a.blocking, a.form) for a in entity_audits(DuckSpelling(), e, where)]  # noqa: E731
    assert names(ENTITY) == [("conservation", True, COUNT), ("key_unique", True, None),
                             ("fail_rule__must_hold", True, None), ("flag_rule__looks_odd", False, None)]
    assert names(_entity(dedupe=SimpleNamespace(field="x")))[1][0] == "fail_rule__must_hold"  # dedupe: no key audit
    assert names(_entity(materialized="incremental"))[0] == ("conservation", True, LOAD)  # the ledger outlives bronze
    # two mappings of one source: a settled (mapping, load) is no (source, load), so delivery by delivery
    two = tuple(SimpleNamespace(name=n, source="src", bronze_columns=()) for n in ("m1", "m2"))
    assert names(_entity(materialized="incremental", mappings=two))[0] == ("conservation", True, ROW)


def test_the_staged_audits_are_decided_once():
    """Before the entity is written: each fail rule, and the key among the kept rows only where the
    tool cannot audit a candidate before publishing it (and nothing dedupes the key)."""
    from assay.lower.audits import StagedAudit, staged_audits

    fail = StagedAudit("fail_rule__must_hold", rule="must_hold")
    assert staged_audits(ENTITY, audits_a_candidate=True) == [fail]
    assert staged_audits(ENTITY, audits_a_candidate=False) == [fail, StagedAudit("key_unique", key=True)]
    assert staged_audits(_entity(dedupe=SimpleNamespace(field="x")), audits_a_candidate=False) == [fail]


def test_a_null_key_part_is_no_identity():
    con = _story()
    con.execute("update entity set item_id = null")
    assert con.execute(key_unique_sql(DuckSpelling(), ENTITY, "entity")).fetchall() == []


# --------------------------------------------------------------------------- the targets' spellings


def _sqlmesh_spelling():
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    class Story(SqlmeshSpelling):
        def bronze(self, source):
            return f"bronze_{source}"

        def staged(self, entity):
            return "staged"

    return Story("duckdb")


@pytest.mark.parametrize("label", list(BREAKS))
def test_the_sqlmesh_spelling_finds_the_same(label):
    from assay_sqlmesh import render_sql

    statements, expected = BREAKS[label]
    con = _story()
    for s in statements:
        con.execute(s)
    assert _counts(con, _sqlmesh_spelling(), ENTITY, render_sql) == expected


DBT_PROJECT = """name: story
version: '0.1.0'
config-version: 2
profile: story
models:
  story:
    +materialized: view
"""

SHOW = """
{% macro show_audits() %}
  {%- for entity in ['item', 'ledger'] -%}
    {%- set audits_of = context.get('default__assay_audits__' ~ entity) -%}
    {%- for candidate in var('candidates') -%}
      {%- for audit in audits_of(api.Relation.create(schema='main', identifier=candidate)) -%}
        {%- set n = run_query('select count(*) from (' ~ audit['sql'] ~ ') as v').columns[0].values()[0] -%}
        {%- do print('AUDIT ' ~ entity ~ ' ' ~ candidate ~ ' ' ~ audit['name'] ~ ' ' ~ n) -%}
      {%- endfor -%}
    {%- endfor -%}
  {%- endfor -%}
{% endmacro %}
"""


@pytest.mark.slow
def test_the_dbt_spelling_finds_the_same(tmp_path: Path):
    """The generated audits macros (a full-rebuild entity: the count form; an incremental one:
    the load form), rendered and run by dbt over the story, one candidate per break of the entity."""
    from assay.targets.dbt.outputs import audits_macro
    from tests.support import dbtserver

    con = _story(str(tmp_path / "story.duckdb"))
    candidates = {}
    for label, (statements, expected) in BREAKS.items():
        if all(s.startswith(("delete from entity", "insert into entity", "update entity")) for s in statements):
            name = f"entity_{len(candidates)}"
            con.execute(f"create table {name} as select * from entity")
            for s in statements:
                con.execute(re.sub(r"\bentity\b", name, s))
            candidates[name] = (*expected[:1], LOAD_BREAKS[label], *expected[2:])
    con.close()
    (tmp_path / "dbt_project.yml").write_text(DBT_PROJECT)
    (tmp_path / "profiles.yml").write_text(
        "story:\n  target: duckdb\n  outputs:\n    duckdb:\n      type: duckdb\n"
        f"      path: {json.dumps(str(tmp_path / 'story.duckdb'))}\n")
    (tmp_path / "packages.yml").write_text(f"packages:\n  - local: {json.dumps(str(REPO / 'dbt_package'))}\n")
    (tmp_path / "models").mkdir()
    for entity in ("item", "ledger"):
        (tmp_path / "models" / f"{entity}__staged.sql").write_text("select * from main.staged")
        (tmp_path / "models" / f"{entity}__reject.sql").write_text("select * from main.reject")
    (tmp_path / "models" / "sources.yml").write_text(
        "sources:\n  - name: bronze\n    schema: main\n    tables:\n      - name: src\n        identifier: bronze_src\n")
    (tmp_path / "macros").mkdir()
    macros = audits_macro(ENTITY, "") + audits_macro(_entity(name="ledger", materialized="incremental"), "") + SHOW
    (tmp_path / "macros" / "audits.sql").write_text(macros)
    for args in (["deps"], ["run"], ["run-operation", "show_audits", "--vars", json.dumps({"candidates": sorted(candidates)})]):
        proc = dbtserver.in_project(tmp_path, *args, check=True)
    found: dict = {}
    for line in proc.stdout.splitlines():
        if "AUDIT " in line:
            entity, candidate, name, n = line.split("AUDIT ", 1)[1].split()
            found.setdefault((entity, candidate), {})[name] = int(n)
    assert len(found) == 2 * len(candidates) and len(candidates) >= 5
    for candidate, (count_form, load_form, keys, fail) in candidates.items():
        # dbt's list holds the blocking audits only
        assert found[("item", candidate)] == {"conservation": count_form, "key_unique": keys, "fail_rule__must_hold": fail}, candidate
        assert found[("ledger", candidate)] == {"conservation": load_form, "key_unique": keys, "fail_rule__must_hold": fail}, candidate


def test_bronze_audits_are_decided_once_and_both_targets_spell_them(write_spec):
    """Two mappings read one bronze relation: its freshness is the strictest of each threshold, and
    it gets the ingestion-metadata audit because an entity that reads it carries the metadata; a
    relation with neither gets nothing. dbt's sources and SQLMesh's staged audits say the same."""
    from assay.api import load_project
    from assay.lower.audits import BronzeAudits, bronze_audits
    from assay.targets.dbt.properties import sources_yml
    from assay.targets.sqlmesh.project_files import bronze_audits as sqlmesh_bronze_audits

    spec = write_spec({
        "mapping_orders.yaml": """
            mapping_version: 1
            source: raw_orders
            target: orders
            freshness: {warn_after: 12h, error_after: 2d}
            key:
              order_id: {from: "$.id"}
            fields:
              customer_id: {from: "$.customer"}
            unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
        """,
        "mapping_orders_again.yaml": """
            mapping_version: 1
            name: raw_orders_again
            source: raw_orders
            target: orders
            freshness: {warn_after: 6h, error_after: 3d}
            key:
              order_id: {from: "$.id"}
            unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
        """,
    })
    project = load_project(spec)
    lowered = {b.source: b for b in bronze_audits(project)}
    # Both entities are rebuilt in full, so their staged relations rank the deliveries the test
    # searches for repeats (decision 0412): orders through both of its mappings of raw_orders.
    orders, customers = project.entity("orders"), project.entity("customer")
    assert lowered["raw_orders"] == BronzeAudits("raw_orders", True, "6h", "2d",
                                                 ranked_by=(orders, ("raw_orders", "raw_orders_again")))
    assert (lowered["raw_orders"].warn_after.hours, lowered["raw_orders"].error_after.hours) == (6, 48)
    assert lowered["raw_customers"] == BronzeAudits("raw_customers", True, None, None,
                                                    ranked_by=(customers, ("raw_customers",)))

    dbt_tables = {t["name"]: t for t in sources_yml(project)["sources"][0]["tables"]}
    assert dbt_tables["raw_orders"]["freshness"] == {"warn_after": {"count": 6, "period": "hour"},
                                                    "error_after": {"count": 2, "period": "day"}}
    assert dbt_tables["raw_orders"]["data_tests"] == [
        {"assay.assay_ingestion_metadata": {"name": "assay_ingestion_metadata__raw_orders", "arguments": {
            "ranked": 'ref("orders__staged")', "mappings": ["raw_orders", "raw_orders_again"]},
            # what dbt's on-run-end hook records when this test stops the entity (decision 0935)
            "config": {"meta": {"assay_stops": [{"table": "orders", "node": "orders", "check": "INGESTION_METADATA",
                                                 "order": 0, "records": False}], "assay_meta_schema": "assay_meta"}}}}]
    assert "freshness" not in dbt_tables["raw_customers"] and "config" not in dbt_tables["raw_customers"]
    assert sqlmesh_bronze_audits(project) == {
        "raw_customers": [("assay_ingestion_metadata", {})],
        "raw_orders": [("assay_ingestion_metadata", {}), ("assay_freshness_warn", {"max_age_hours": "6"}),
                       ("assay_freshness_error", {"max_age_hours": "48"})],
    }
    # On SQLMesh the audit runs on each staged model that reads the relation, ranked by that model
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling
    from assay.targets.sqlmesh.staged import staged_audits

    assert staged_audits(orders, project, SqlmeshSpelling("duckdb"))[0] == (
        "assay_ingestion_metadata(source := bronze.raw_orders, ranked_mappings := ('raw_orders', 'raw_orders_again'))")


def test_a_relation_two_mappings_read_is_placed_once_per_mapping():
    """Decision 0947: two mappings of one relation each stage every bronze row, so each bronze
    delivery is placed once per mapping: r1 kept by both, r2 kept by `m` and quarantined by `m2`,
    r3 quarantined by both (two reject rows, one per mapping). Both forms of the law hold; a
    mapping's reject row missing, or recorded under the other mapping, breaks it."""
    meta = ("_source_row_id", "_load_id", "_ingested_at")
    both = (SimpleNamespace(name="m", source="src", bronze_columns=meta), SimpleNamespace(name="m2", source="src", bronze_columns=meta))
    con = duckdb.connect()
    con.execute("""create table staged as select * from (values
        ('m', 'r1', 'L1', 1, 'kept', 'a1', []::varchar[]), ('m2', 'r1', 'L1', 1, 'kept', 'b1', []::varchar[]),
        ('m', 'r2', 'L1', 1, 'kept', 'a2', []::varchar[]), ('m2', 'r2', 'L1', 1, 'quarantined', 'b2', ['q_rule']),
        ('m', 'r3', 'L1', 1, 'quarantined', 'a3', ['q_rule']), ('m2', 'r3', 'L1', 1, 'quarantined', 'b3', ['q_rule'])
        ) as t(_mapping, _source_row_id, _load_id, _delivery_rank, _route, item_id, _failed_rules)""")
    con.execute("create table bronze_src as select distinct _source_row_id, _load_id from staged")
    con.execute("create table entity as select item_id, _mapping, _source_row_id, _load_id, _failed_rules as _quality_flags "
                "from staged where _route = 'kept'")
    con.execute("""create table reject as select * from (values
        ('src', 'm2', 'r2', 'L1', cast(null as timestamp)), ('src', 'm', 'r3', 'L1', null), ('src', 'm2', 'r3', 'L1', null)
        ) as t(source_relation, mapping, _source_row_id, _load_id, resolved_at)""")
    where = Audited("entity", "reject")
    for materialized, form in (("table", COUNT), ("incremental", ROW)):
        entity = _entity(mappings=both, materialized=materialized)
        assert entity_audits(DuckSpelling(), entity, where)[0].form == form
    violations = lambda form: len(con.execute(conservation_sql(DuckSpelling(), _entity(mappings=both), where, form)).fetchall())  # noqa: E731
    assert (violations(COUNT), violations(ROW)) == (0, 0)
    con.execute("update reject set mapping = 'm' where mapping = 'm2' and _source_row_id = 'r2'")
    assert (violations(COUNT), violations(ROW)) == (1, 1)
    con.execute("delete from reject where _source_row_id = 'r2'")
    assert (violations(COUNT), violations(ROW)) == (1, 1)
