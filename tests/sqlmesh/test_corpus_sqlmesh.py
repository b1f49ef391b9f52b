"""The peer project's dirty-data corpus through a real `sqlmesh plan --auto-apply`.

Every labelled row must land where its `_expected` says, as it does through `dbt build`
(tests/integration/test_corpus_dbt.py). The corpus was not written by this project, so
passing it is evidence, not tuning.
"""

from __future__ import annotations

import hashlib

import pytest

from tests.support.corpus import DIRTY, dirty_corpus
from tests.support.outcomes import observe
from tests.support.sqlmeshfailures import plan_fails
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow

FK_COLUMNS = {"dirty_ref": ("customer_ref", "parent_ref")}
# As on dbt: DuckDB and Postgres read `1.2e3` as 1200 and ignore surrounding spaces when
# casting to decimal, so all three are kept and the text `pattern` rule flags them.
DIVERGENT = {"num_007": "flag", "num_011": "flag", "num_012": "flag"}
# Rows no rule of the corpus spec can flag (docs/decisions/0002-corpus-rows-the-spec-cannot-flag.md):
# U+200D is allowed by the `charset` rule, and a lone U+0301 is NFC, within length and unique.
SPEC_CANNOT_FLAG = {("dirty_name", "uni_004"): "pass", ("dirty_name", "uni_017"): "pass"}


def _build(root, engine, pg=None):
    corpus = dirty_corpus().without_fail_rows()
    project = make_project(root, DIRTY / "spec", engine=engine, pg=pg)
    project.load_bronze(corpus.relations.values())
    plan = project.plan()
    return project, corpus, plan


def expected_outcome(e) -> str:
    want = {"dedupe_winner": "pass"}.get(e.outcome, e.outcome)
    if want == "dialect_divergent":
        want = DIVERGENT[e.source_row_id]
    return SPEC_CANNOT_FLAG.get((e.entity, e.source_row_id), want)


class CorpusSuite:
    """The corpus assertions, written once; each engine subclass provides `built`."""

    def test_every_labelled_row_lands_where_expected(self, built):
        project, corpus, _ = built
        observed = {entity: observe(project, entity, FK_COLUMNS.get(entity, ())) for entity in sorted({e.entity for e in corpus.expectations})}
        mismatches = []
        for e in corpus.expectations:
            obs = observed[e.entity].get(e.source_row_id)
            got = obs.outcome(FK_COLUMNS.get(e.entity, ())) if obs else "nowhere"
            if got != expected_outcome(e):
                mismatches.append(f"{e.entity} {e.source_row_id} {e.case}: expected {expected_outcome(e)}, got {got}")
        assert not mismatches, "\n".join(mismatches)
        assert len(corpus.expectations) >= 160

    def test_unknown_member_rewrites_only_the_orphan_key(self, built):
        project, _corpus, _ = built
        rows = {r[0]: r[1:] for r in project.query('select _source_row_id, customer_ref, parent_ref, _quality_flags from silver."dirty_ref"')}
        assert rows["ref_002"][0] == "__unknown__" and rows["ref_002"][1] is None
        assert list(rows["ref_002"][2]) == ["ref_of_customer_referential"]
        assert rows["ref_006"][:2] == ("C-100", "__unknown__")
        assert rows["ref_011"][0] == "__unknown__"
        assert rows["ref_003"][0] is None and list(rows["ref_003"][2]) == []

    def test_reject_rows_carry_identity_payload_and_every_failed_rule(self, built):
        project, _corpus, _ = built
        rows = project.query(
            "select _source_row_id, reject_id, failed_rules, disposition, first_seen, last_seen, raw, key_values, resolved_at "
            'from silver."dirty_status__reject" order by _source_row_id'
        )
        r = {row[0]: row for row in rows}["enu_014"]
        assert list(r[2]) == ["status_in_enum", "status_text_in_set"]
        assert r[3] == "quarantine" and r[8] is None
        assert str(r[4]) == str(r[5]) == "2026-01-05 09:00:00"
        assert '"raw_status":"NULL"' in r[6].replace(" ", "") and '"case_name":"literal_null_string"' in r[7].replace(" ", "")
        assert r[1] == hashlib.md5(b"dirty__enums|enu_014").hexdigest()

    def test_dedupe_keeps_the_latest_by_the_total_order(self, built):
        project, _corpus, _ = built
        rows = dict(project.query("select _source_row_id, amount from silver.\"dirty_key\" where order_id in ('ORD-1001', 'ORD-1002', 'ORD-1003')"))
        assert set(rows) == {"key_003", "key_005", "key_007"}
        deduped = {r[0] for r in project.query("select _source_row_id from silver.\"dirty_key__staged\" where _route = 'deduped'")}
        assert deduped == {"key_002", "key_004", "key_006"}

    def test_mart_accounts_for_every_row_under_the_plans_id(self, built):
        project, corpus, plan = built
        rows = project.query(
            "select entity, rule, disposition, rows_evaluated, rows_failed, rows_quarantined, rows_deduped, run_id, run_date "
            "from gold.mart_data_quality"
        )
        acct = {r[0]: r for r in rows if r[1] == "(entity)"}
        assert acct["dirty_key"][3:7] == (len([e for e in corpus.expectations if e.entity == "dirty_key"]) - 3, 0, 4, 3)
        rule_rows = {(r[0], r[1]): r for r in rows if r[1] != "(entity)"}
        assert rule_rows[("dirty_status", "status_in_enum")][2] == "quarantine"
        assert rule_rows[("dirty_status", "status_in_enum")][4] == 14
        assert all(r[3] == 0 and r[5] == 0 and r[6] == 0 for r in rule_rows.values())
        # one run, one identifier: the id of the plan that evaluated the mart
        assert {r[7] for r in rows} == {f"SQLMESH_PLAN: {plan.plan_id}"}
        # the date of that plan's injected execution time (not the project's clock now: another
        # test of this class may have planned since, so no result depends on the order)
        assert {str(r[8]) for r in rows} == {plan.execution_time.date().isoformat()}

    def test_fail_rows_stop_the_plan_before_the_entity_is_rebuilt(self, built):
        """The `fail` specimens break the ingestion metadata: the blocking audit on the staged
        model fails, SQLMesh skips everything downstream, and the entity keeps its rows."""
        project, _corpus, _ = built
        full = dirty_corpus()
        keys = full.relations["dirty__keys"]
        clean = project.query('select count(*) from bronze."dirty__keys"')[0][0]
        before = sorted(project.query('select * from silver."dirty_key"'), key=repr)
        violations = project.query(project.render("@assay_ingestion_metadata_violations(bronze.dirty__keys)"))
        assert violations == []
        try:
            project.load_bronze([keys])
            found = {r[0] for r in project.query(project.render("@assay_ingestion_metadata_violations(bronze.dirty__keys)"))}
            assert found == {"missing_metadata", "duplicate_source_row_id", "unparseable_ingested_at"}
            failures = plan_fails(project)
            # exactly the blocking ingestion audit of the staged model, on exactly the fail rows
            assert [(f.model_name, f.audit, f.count) for f in failures] == [
                ("silver.dirty_key__staged", "assay_ingestion_metadata", 5)], failures
            assert sorted(project.query(failures[0].sql), key=repr) == sorted([
                ("duplicate_source_row_id", "key_dup"), ("missing_metadata", None), ("missing_metadata", "key_017"),
                ("unparseable_ingested_at", "key_018"), ("missing_metadata", "key_019")], key=repr)
            assert sorted(project.query('select * from silver."dirty_key"'), key=repr) == before
        finally:
            project.load_bronze([dirty_corpus().without_fail_rows().relations["dirty__keys"]])
        assert project.query('select count(*) from bronze."dirty__keys"')[0][0] == clean


class TestCorpusDuckDB(CorpusSuite):
    @pytest.fixture(scope="class")
    def built(self, tmp_path_factory):
        project, corpus, plan = _build(tmp_path_factory.mktemp("sqlmesh_dirty_duckdb"), "duckdb")
        yield project, corpus, plan
        project.close()


@pytest.mark.postgres
class TestCorpusPostgres(CorpusSuite):
    @pytest.fixture(scope="class")
    def built(self, tmp_path_factory, postgres_database):
        project, corpus, plan = _build(tmp_path_factory.mktemp("sqlmesh_dirty_pg"), "postgres", postgres_database("sqlmesh_dirty"))
        yield project, corpus, plan
        project.close()
