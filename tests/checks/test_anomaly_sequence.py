"""The build-time anomaly check is the detector, run by run (decision 1030).

A generated history (assay.anomalies.synthetic: weekly pattern, a volume spike, a rule's level
shift, a quarantine drop, a failed run) is built one run at a time on DuckDB: for run k the mart
holds runs 0..k-1, the staged relation holds run k's rows, and the entity's real generated
measuring query (the dbt target's text, its Jinja rendered with the package's calls spelt for
DuckDB) judges run k; its results are recorded as the materialization records them, and read by
the next runs' level-shift and left-out rules. Every verdict (observed value, band, anomalous or
not) must equal what `assay anomalies`' detector, with its rounds, says about the same run.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import jinja2

from assay.anomalies import synthetic
from assay.anomalies.detect import detect
from assay.anomalies.method import METHOD, QUARANTINE_RATE, VOLUME
from assay.anomalies.synthetic import Event
from assay.checks.recorded import verdict_of

ENTITIES = """\
spec_version: 1
entities:
  orders:
    grain: one row per order
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
      amount: {type: int}
    quarantine: {retention: 30d}
    thresholds:
      anomaly: {metrics: [volume, quarantine_rate], on_breach: warn}
    quality:
      - {rule: expression, name: amount_range, expr: "amount >= 0", on_fail: quarantine, anomaly: {on_breach: warn}}
      - {rule: expression, name: status_in_set, expr: "amount < 1000", on_fail: flag, anomaly: {on_breach: warn}}
      - {rule: expression, name: email_pattern, expr: "amount <> 7", on_fail: flag, anomaly: {on_breach: warn}}
"""
MAPPING = """\
mapping_version: 1
source: raw_orders
target: orders
key:
  order_id: {from: "$.id"}
fields:
  amount:
    from: "$.amount"
    transform: [to_int]
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
MEASURES = {"VOLUME_ANOMALY": VOLUME, "QUARANTINE_RATE_ANOMALY": QUARANTINE_RATE,
            **{f"{r.upper()}_ANOMALY": r for r in synthetic.RULES}}
TYPES = {"string": "varchar", "int": "bigint", "date": "date", "timestamp": "timestamp"}


class _Package:
    """The dbt package's calls the measuring query makes, spelt for DuckDB."""

    def __init__(self, run: str, started) -> None:
        self.run, self.started = run, started

    def sql_type(self, t: str) -> str:
        return TYPES[t]

    def string_literal(self, value: str) -> str:
        return "'" + value.replace("'", "''") + "'"

    def run_timestamp(self) -> str:
        return f"timestamp '{self.started.isoformat(sep=' ')}'"

    def flags_contain(self, column: str, rule: str) -> str:
        return f"(position('|{rule}|' in {column}) > 0)"


def _staged(con, rows: list[tuple]) -> None:
    """The staged relation of one run whose counts are the mart rows `rows` of that run."""
    entity = next(r for r in rows if r[2] == "(entity)")
    evaluated, quarantined, deduped = entity[4], entity[6], entity[7]
    fires = {r[2]: r[5] for r in rows if r[2] != "(entity)"}
    flags = " || ".join(f"case when i <= {n} then '{rule}|' else '' end" for rule, n in sorted(fires.items()))
    con.execute(f"""create or replace table staged as select
        case when i <= {evaluated} then 1 else 2 end as _dedupe_rank,
        case when i > {evaluated} then 'deduped' when i <= {quarantined} then 'quarantined' else 'kept' end as _route,
        '|' || {flags} as _failed_rules
        from range(1, {evaluated + deduped + 1}) as t(i)""")


def _judged_run_by_run(tmp_path: Path, entities: str, history, enforcement: str = "advisory"):
    """Build `history` one run at a time as the module docstring says; each run's recorded results
    carry `enforcement` (`required` for `on_breach: fail`: a failing one is a refused run, which
    the next runs read as failed). Returns the connection and {(run, measure): (passed, measures)}."""
    from assay.ir.resolve import compile_spec
    from assay.targets.dbt.declared_checks import declared_query

    spec = tmp_path / "spec"
    spec.mkdir()
    (spec / "entities.yml").write_text(entities)
    (spec / "orders.yml").write_text(MAPPING)
    project, diags, _ = compile_spec(spec)
    assert diags == []
    sql, descriptors = declared_query(project.entities[0])
    template = jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(sql)
    con = duckdb.connect()
    con.execute(synthetic.MART_DDL.format(table="mart"))
    con.execute("create table results (run_id varchar, table_name varchar, check_id varchar, check_position bigint, "
                "kind varchar, enforcement varchar, passed boolean, row_count bigint, check_spec varchar, "
                "measures varchar, recorded_at timestamp)")
    detector = {(v.run_id, v.measure): v for v in detect(lambda q: con.execute(q).fetchall(), "duckdb", ("main", "mart"))}
    assert detector == {}  # the mart is still empty; the detector runs over the whole history below
    by_run: dict[str, list[tuple]] = {}
    for r in history.rows:
        by_run.setdefault(r[8], []).append(r)

    built = {}
    for k, run in enumerate(history.run_ids):
        rows = by_run[run]
        _staged(con, rows)
        text = template.render(assay=_Package(run, rows[0][10]), invocation_id=run, candidate="staged",
                               ref=lambda name: "staged", target={"type": "duckdb"},
                               assay_history={"mart": "mart", "results": "results", "events": None})
        cur = con.execute(text)
        row = dict(zip([d[0] for d in cur.description], cur.fetchone()))
        for position, d in enumerate(descriptors, 1):
            measures = {key: (None if row[c] is None else int(row[c])) for key, c in d["counts"].items()}
            measures.update({key: (None if row[c] is None else str(row[c])) for key, c in d["texts"].items()})
            spec_json = {"columns": [], "types": [], "bounds": d["bounds"]}
            verdict = verdict_of("anomaly", spec_json, measures)
            built[(run, MEASURES[d["check_id"]])] = (verdict.passed, measures)
            con.execute(f"insert into results values (?, 'orders', ?, ?, 'anomaly', '{enforcement}', ?, ?, ?, ?, now())",
                        [run, d["check_id"], position, verdict.passed, measures["rows"], json.dumps(spec_json, sort_keys=True),
                         json.dumps(measures, sort_keys=True)])
        con.executemany(f"insert into mart values ({', '.join(['?'] * 11)})", rows)
    return con, built


def _agree(con, built, results=None) -> list[tuple]:
    """Every verdict of the build-time checks equals the detector's; the anomalies (measure, run, direction)."""
    checked = {m for _, m in built}
    verdicts = [v for v in detect(lambda q: con.execute(q).fetchall(), "duckdb", ("main", "mart"), results=results)
                if v.measure in checked]
    assert len(verdicts) == len(built)
    flagged = []
    for v in verdicts:
        passed, m = built[(v.run_id, v.measure)]
        assert passed is (not v.anomalous), (v, m)
        if v.judged:
            assert [float(m["observed"]), float(m["low"]), float(m["high"]), m["learnt_from"]] == \
                [v.observed, v.low, v.high, v.learnt_from], (v, m)
        else:
            assert v.observed is None or m["history"] < METHOD.min_history, (v, m)
        if v.anomalous:
            flagged.append((v.measure, int(v.run_id[4:]), v.direction))
    return sorted(flagged)


def test_every_run_is_judged_as_the_detector_judges_it(tmp_path: Path) -> None:
    events = (Event(VOLUME, 25, "spike", 3.0), Event("status_in_set", 33, "shift", 3.0),
              Event(QUARANTINE_RATE, 45, "drop", 0.0))
    history = synthetic.generate(56, 7, weekly=True, events=events, load=400, failed_runs=(20,))
    con, built = _judged_run_by_run(tmp_path, ENTITIES, history)
    assert len(built) == 56 * 5
    # run 20's `fail` rule (id_not_null) has a row of its own in the mart, and no check; its load
    # was judged normal, so run 21 is measured from it (no alarm)
    # exactly the injected events: the spike, the drop, and the shift's first three runs, after
    # which it is learnt; the failed run is judged and never learnt from; no false alarm
    assert _agree(con, built) == [(QUARANTINE_RATE, 45, "down"), (VOLUME, 25, "up"), ("status_in_set", 33, "up"),
                                  ("status_in_set", 34, "up"), ("status_in_set", 35, "up")]


def test_a_refused_volume_spike_is_refused_again_while_it_stays_in_bronze(tmp_path: Path) -> None:
    """`on_breach: fail` on volume: run 11's spike is refused (set back, recorded failed, so not
    learnt from). Its rows stay in bronze, so run 12 loads them again, with its own: it is
    measured from run 10, the last run not refused, and refused too, and so on (docs/anomalies.md,
    "Things to know before choosing `fail`"). Measured from the refused run 11, run 12 would pass
    with one day's load, and the next build would publish the spike without a word."""
    entities = ENTITIES.replace("metrics: [volume, quarantine_rate], on_breach: warn", "metrics: [volume], on_breach: fail")
    assert entities != ENTITIES
    history = synthetic.generate(16, 7, weekly=True, events=(Event(VOLUME, 11, "spike", 3.0),), load=400)
    con, built = _judged_run_by_run(tmp_path, entities, history, enforcement="required")
    flagged = _agree(con, built, results=("main", "results"))
    assert [(run, d) for m, run, d in flagged if m == VOLUME] == [(11, "up"), (12, "up"), (13, "up"), (14, "up"), (15, "up")]
    bronze = {r[8]: r[4] + r[7] for r in history.rows if r[2] == "(entity)"}
    for k in range(12, 16):  # each measured from run 10, the spike counted again
        observed = float(built[(synthetic.run_id(k), VOLUME)][1]["observed"])
        assert observed == bronze[synthetic.run_id(k)] - bronze[synthetic.run_id(10)], (k, observed)
