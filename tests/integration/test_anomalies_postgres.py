"""The anomaly detector's one SQL text on PostgreSQL (15 and 18) gives DuckDB's verdicts.

The same generated histories (a weekly pattern with spikes and drops, a level shift, a failed
run) go into a mart table on each engine; every run's band, median, learnt-from count and
direction must agree, and the injected events must be hit on PostgreSQL as on DuckDB.
"""

from __future__ import annotations

import duckdb
import pytest

from assay.anomalies import synthetic
from assay.anomalies.detect import detect
from assay.anomalies.method import QUARANTINE_RATE, VOLUME
from assay.anomalies.synthetic import Event

pytestmark = pytest.mark.postgres
# docs/anomalies.md says PostgreSQL 15 and 18 give DuckDB's verdicts: both are run.
PG15 = "the anomaly detector's SQL is documented to give DuckDB's verdicts on PostgreSQL 15 and 18"

HISTORIES = {
    "spikes and drops": synthetic.generate(
        75, 5, weekly=True, failed_runs=(33,),
        events=(Event(VOLUME, 30, "spike", 3.0), Event("status_in_set", 41, "drop", 0.0),
                Event(QUARANTINE_RATE, 55, "spike", 3.0), Event(VOLUME, 70, "drop", 0.25))),
    "level shift": synthetic.generate(70, 2, weekly=True, events=(Event(VOLUME, 43, "shift", 1.8),)),
}


def _key(v):
    r = lambda x: None if x is None else round(x, 9)  # noqa: E731 - floats summed in another order
    return (v.entity, v.measure, v.run_id, str(v.run_date), v.failed, r(v.observed), v.history, v.season, v.learnt_from,
            r(v.median), r(v.low), r(v.high), v.judged, v.direction)


def _duckdb(history):
    con = duckdb.connect()
    try:
        con.execute("create schema gold")
        synthetic.load_into(con, "gold.mart_data_quality", history)
        return detect(lambda q: con.execute(q).fetchall(), "duckdb", ("gold", "mart_data_quality"))
    finally:
        con.close()


@pytest.mark.parametrize("name", sorted(HISTORIES))
def test_postgres_gives_duckdbs_verdicts(postgres_database, name):
    import psycopg2

    history = HISTORIES[name]
    conn = psycopg2.connect(**postgres_database("anomalies_" + name.replace(" ", "_")))
    conn.autocommit = True
    try:
        cur = conn.cursor()
        cur.execute("create schema gold")
        synthetic.load_into(conn, "gold.mart_data_quality", history, placeholder="%s")

        def query(sql):
            cur.execute(sql)
            return cur.fetchall()

        on_postgres = detect(query, "postgres", ("gold", "mart_data_quality"))
    finally:
        conn.close()
    on_duckdb = _duckdb(history)
    # one verdict per run of each measure: the accounting row's quarantine rate, each rule row, the volume
    assert len(on_postgres) == len(on_duckdb) == len({(r[2], r[8]) for r in history.rows}) + history.runs
    assert [_key(v) for v in on_postgres] == [_key(v) for v in on_duckdb]
    score = synthetic.score(history, on_postgres)
    assert (score.hits, score.false_alarms) == (len(history.events), 0), score
    assert any(v.failed for v in on_postgres) == (name == "spikes and drops")
