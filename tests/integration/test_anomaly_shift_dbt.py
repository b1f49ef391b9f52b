"""A level shift at build time (decision 1030): three anomalies in a row in one direction, as the
results table recorded them, are a new level, and the next build learns from its first run on, as
`assay anomalies` does (decision 0950). DuckDB and PostgreSQL.

The history is seeded between two real builds (the real multi-build path is
tests/integration/test_anomaly_checks_dbt.py): after build 1 (8 bronze rows), six runs loading 8,
8, 8, then 40, 40, 40 rows, the last three recorded by the VOLUME_ANOMALY check as anomalous
upwards (warned). Build 2 loads 40: inside the new level's band [30, 50] learnt from 3 runs, so
it is published; without the level-shift rule it would be judged against [-2, 18] and set back.
Build 3 loads 200: above the band, `fail`: set back, the previous version stays. The detector,
run over the same warehouse with the same min_history, gives the same band for build 2.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest

from tests.integration.test_anomaly_checks_dbt import ITEMS
from tests.support.corpus import Relation
from tests.support.dbtproject import make_project
from tests.support.items import COLS, checks, published, run_id, write_spec

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  item:
    grain: one row per item
    key: [item_id]
    fields:
      item_id: {type: string, required: true}
      name: {type: string}
      qty: {type: int}
    quarantine: {retention: 30d}
    dedupe: {keep: latest_by, field: _ingested_at, tie_break: [_load_id]}
    thresholds:
      anomaly: {metrics: [volume], on_breach: fail, min_history: 3}
    quality:
      - {rule: expression, name: name_not_x, expr: "name <> 'x'", on_fail: flag}
"""
SEEDED = [("s1", 16, None), ("s2", 24, None), ("s3", 32, None), ("s4", 72, "up"), ("s5", 112, "up"), ("s6", 152, "up")]


def _bronze(total: int) -> Relation:
    """`total` bronze rows over the keys i1..i8 (the entity keeps 8 rows whatever the volume)."""
    start = dt.datetime(2026, 2, 1)
    return Relation("raw_items", COLS, [[f"l{n // 8}", (start + dt.timedelta(minutes=n)).isoformat() + "Z", f"r{n}",
                                         f"i{n % 8 + 1}", "a", str(n % 8 + 1)] for n in range(total)])


def _seed(project, run1: str) -> None:
    [(started,)] = project.query(f"select max(run_started_at) from gold.mart_data_quality where run_id = '{run1}'")
    conn = project.connect()
    try:
        cur = conn.cursor()
        for k, (run, bronze, direction) in enumerate(SEEDED, 1):
            at = (started + dt.timedelta(milliseconds=k)).isoformat(sep=" ")
            cur.execute("insert into gold.mart_data_quality (entity, mapping, rule, disposition, rows_evaluated, "
                        "rows_failed, rows_quarantined, rows_deduped, run_id, run_date, run_started_at) values "
                        f"('item', null, '(entity)', '(entity)', 8, 0, 0, {bronze - 8}, '{run}', "
                        f"cast('{at[:10]}' as date), cast('{at}' as timestamp))")
            measures = json.dumps({"direction": direction, "rows": 8}, sort_keys=True)
            cur.execute("insert into assay_meta.assay_check_results (run_id, table_name, check_id, check_position, "
                        "kind, enforcement, passed, row_count, check_spec, measures, recorded_at) values "
                        f"('{run}', 'item', 'VOLUME_ANOMALY', 1, 'anomaly', 'advisory', {'false' if direction else 'true'}, "
                        f"8, '{{}}', '{measures}', cast('{at}' as timestamp))")
        if hasattr(conn, "commit"):
            conn.commit()
    finally:
        conn.close()


class Shift:
    def test_a_level_shift_is_learnt_then_a_spike_sets_back(self, project):
        project.load_bronze([_bronze(8)])
        project.dbt("build", check=True)
        _seed(project, run_id(project))

        project.load_bronze([_bronze(192)])
        proc = project.dbt("build")
        assert proc.returncode == 0, proc.stdout[-5000:]
        run2 = run_id(project)
        code, results, _ = checks(project, run2)
        assert code == 0, results
        assert results["VOLUME_ANOMALY"]["detail"] == (
            "loaded 40 rows since the previous run, within the band [30, 50] learnt from 3 earlier runs (median 40)")
        before = published(project)

        project.load_bronze([_bronze(392)])
        proc = project.dbt("build")
        assert proc.returncode != 0, proc.stdout[-5000:]
        spike = run_id(project)
        code, results, text = checks(project, spike)
        assert code == 2
        want = "loaded 200 rows since the previous run, above the band [30, 50] learnt from 4 earlier runs (median 40)"
        assert f"item: VOLUME_ANOMALY: FAILED: {want}" in text, text
        assert published(project) == before

        from assay.anomalies.detect import detect
        from assay.anomalies.method import METHOD

        conn = project.connect()
        try:
            def query(sql):
                cur = conn.cursor()
                cur.execute(sql)
                return [tuple(r) for r in cur.fetchall()]

            verdicts = detect(query, project.engine, ("gold", "mart_data_quality"), method=replace(METHOD, min_history=3),
                              results=("assay_meta", "assay_check_results"))
        finally:
            conn.close()
        [v] = [v for v in verdicts if v.run_id == run2 and v.measure == "(volume)"]
        assert (v.observed, v.low, v.high, v.learnt_from, v.anomalous) == (40.0, 30.0, 50.0, 3, False)
        # the spike's run was set back, and its counts are in the mart all the same: anomalous, never learnt from
        assert {v.run_id for v in verdicts if v.anomalous} == {"s4", "s5", "s6", spike}


class TestShiftDuckDB(Shift):
    @pytest.fixture
    def project(self, tmp_path):
        return make_project(tmp_path / "proj", write_spec(tmp_path, ENTITIES, ITEMS), engine="duckdb")


@pytest.mark.postgres
class TestShiftPostgres(Shift):
    @pytest.fixture
    def project(self, tmp_path, postgres_database):
        return make_project(tmp_path / "proj", write_spec(tmp_path, ENTITIES, ITEMS), engine="postgres",
                            pg=postgres_database("anomalyshift"))
