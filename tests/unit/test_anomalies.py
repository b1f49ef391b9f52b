"""`assay anomalies`' detector on generated histories in a real in-process DuckDB mart.

Known anomalies are hit and counted, clean weekly patterns raise no alarm, and the edges of the
method hold: too little history gives no verdict, the judged run never trains its own band, an
anomalous or failed earlier run never trains a later band, a level shift is learnt after
`shift_runs` alarms, and a rate that goes from 0 to 1 row among a million is no alarm.
"""

from __future__ import annotations

import statistics

import duckdb
import pytest
import sqlglot

from assay.anomalies import synthetic
from assay.anomalies.detect import Verdict, detect, next_state
from assay.anomalies.method import METHOD, QUARANTINE_RATE, VOLUME, State, band_sql
from assay.anomalies.synthetic import Event

MART = ("gold", "mart_data_quality")


def _verdicts(history: synthetic.History, **kw) -> list[Verdict]:
    con = duckdb.connect()
    try:
        con.execute("create schema gold")
        synthetic.load_into(con, "gold.mart_data_quality", history)
        return detect(lambda q: con.execute(q).fetchall(), "duckdb", MART, **kw)
    finally:
        con.close()


def _series(verdicts, measure):
    return {v.run_id: v for v in verdicts if v.measure == measure}


def _flags(verdicts):
    return sorted((v.measure, int(v.run_id[4:]), v.direction) for v in verdicts if v.anomalous)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_clean_weekly_pattern_raises_no_alarm(seed):
    history = synthetic.generate(120, seed, weekly=True)
    verdicts = _verdicts(history)
    assert _flags(verdicts) == []
    # The weekend loads are 40% of the weekday ones: learnt per weekday once there are 6 of them.
    late = [v for v in verdicts if v.measure == VOLUME and v.seq > 60]
    assert {v.season for v in late} == {"weekday"}
    assert all(v.judged for v in late)


def test_injected_spikes_and_drops_are_hit_and_nothing_else_is_flagged():
    events = (Event(VOLUME, 30, "spike", 3.0), Event("status_in_set", 41, "drop", 0.0),
              Event(QUARANTINE_RATE, 55, "spike", 3.0), Event(VOLUME, 70, "drop", 0.25))
    history = synthetic.generate(90, 5, weekly=True, events=events)
    verdicts = _verdicts(history)
    score = synthetic.score(history, verdicts)
    assert (score.events, score.hits, score.false_alarms) == (4, 4, 0), score
    assert _flags(verdicts) == sorted([(VOLUME, 30, "up"), ("status_in_set", 41, "down"), (QUARANTINE_RATE, 55, "up"),
                                       (VOLUME, 70, "down")])


def test_measured_rates_on_generated_scenarios():
    """A small sample of the benchmark's scenarios (benchmarks/anomalies.py runs them all)."""
    totals = {"events": 0, "hits": 0, "false": 0, "judged": 0}
    for scenario in synthetic.SCENARIOS[1:6]:
        history = synthetic.scenario_history(scenario, 3)
        s = synthetic.score(history, _verdicts(history), METHOD.shift_runs)
        totals["events"] += s.events
        totals["hits"] += s.hits
        totals["false"] += s.false_alarms
        totals["judged"] += s.judged_runs
    assert totals["events"] == 9 and totals["hits"] == 9
    assert totals["false"] == 0


def test_too_little_history_gives_no_verdict():
    # 7 runs: the last one has 6 earlier runs for its rates (5 loads for its volume): nothing is judged.
    history = synthetic.generate(7, 1, weekly=False, events=(Event(QUARANTINE_RATE, 6, "spike", 50.0),))
    verdicts = _verdicts(history)
    assert not any(v.judged or v.anomalous for v in verdicts)
    last = _series(verdicts, QUARANTINE_RATE)["run-0006"]
    assert (last.history, last.direction) == (6, None)
    # One more run, with the same spike: 7 earlier runs, judged and flagged.
    history = synthetic.generate(8, 1, weekly=False, events=(Event(QUARANTINE_RATE, 7, "spike", 50.0),))
    last = _series(_verdicts(history), QUARANTINE_RATE)["run-0007"]
    assert (last.history, last.judged, last.direction) == (7, True, "up")
    # Outside the band of all 7 runs and outside the one of the same weekday's single run, it is
    # reported against the nearer one (a weekday band this young is at least as wide as the other).
    assert (last.season, last.learnt_from) == ("weekday", 1)


def test_the_judged_run_never_trains_its_own_band():
    clean = synthetic.generate(40, 9, weekly=False)
    spiked = synthetic.generate(40, 9, weekly=False, events=(Event(QUARANTINE_RATE, 35, "spike", 40.0),))
    a = _series(_verdicts(clean), QUARANTINE_RATE)["run-0035"]
    b = _series(_verdicts(spiked), QUARANTINE_RATE)["run-0035"]
    assert b.observed > 10 * a.observed and b.direction == "up" and a.direction is None
    # The same band whatever the judged run holds: it learnt only from the runs before it.
    assert (a.median, a.low, a.high, a.learnt_from) == (b.median, b.low, b.high, b.learnt_from)
    # ... and the median is the median of those runs' rates (the latest 28, all of them clean).
    rates = _series(_verdicts(clean), QUARANTINE_RATE)
    earlier = [rates[synthetic.run_id(i)].observed for i in range(35 - METHOD.recent_runs, 35)]
    assert a.median == pytest.approx(statistics.median(earlier))


def test_an_anomalous_earlier_run_never_trains_a_later_band():
    spiked = synthetic.generate(40, 9, weekly=False, events=(Event(QUARANTINE_RATE, 20, "spike", 40.0),))
    rates = _series(_verdicts(spiked), QUARANTINE_RATE)
    assert rates["run-0020"].direction == "up"
    after = rates["run-0021"]
    # 21 earlier runs, one of them anomalous: learnt from 20, and its median is theirs.
    assert (after.history, after.learnt_from) == (20, 20)
    clean_earlier = [rates[synthetic.run_id(i)].observed for i in range(20)]
    assert after.median == pytest.approx(statistics.median(clean_earlier))


def test_a_failed_run_is_judged_but_never_learnt_from():
    history = synthetic.generate(30, 4, weekly=False, failed_runs=(20,))
    rates = _series(_verdicts(history), QUARANTINE_RATE)
    assert rates["run-0020"].failed and rates["run-0020"].judged
    assert rates["run-0021"].learnt_from == 20


def test_a_level_shift_rings_shift_runs_times_then_is_learnt():
    # run 43 is a Tuesday: from then on every load is 1.8 times what it was
    history = synthetic.generate(110, 2, weekly=True, events=(Event(VOLUME, 43, "shift", 1.8),))
    verdicts = _verdicts(history)
    assert _flags(verdicts) == [(VOLUME, 43, "up"), (VOLUME, 44, "up"), (VOLUME, 45, "up")]
    volume = _series(verdicts, VOLUME)
    # After the shift it learns only from the shift on: not judged until 7 such runs exist.
    assert [volume[synthetic.run_id(i)].judged for i in range(46, 51)] == [False] * 4 + [True]
    assert volume["run-0050"].history == 7


def test_a_rate_from_zero_to_one_row_in_a_million_is_no_alarm():
    history = synthetic.generate(60, 3, weekly=True, load=1_000_000)
    verdicts = _verdicts(history)
    pattern = [v for v in verdicts if v.measure == "email_pattern"]
    assert {v.observed for v in pattern} >= {0.0} and any(v.observed > 0 for v in pattern)
    assert not any(v.anomalous for v in pattern)


def test_next_state_is_the_sequential_rule():
    def v(seq, direction, failed=False, judged=True):
        return Verdict("e", "r", "rate", f"r{seq}", None, None, seq, failed, 1.0, 7, "all", 7, 1.0, 0.0, 2.0,
                       judged, direction)

    # a failed anomalous run is left out too (never learnt from anyway): a refused volume is then
    # counted again by the next run, as the build-time check reads the recorded result
    state = next_state([v(1, None), v(2, "up"), v(3, None), v(4, "up"), v(5, "up", failed=True), v(6, "down")])
    assert state == State(frozenset({("e", "r", "r2"), ("e", "r", "r4"), ("e", "r", "r5"), ("e", "r", "r6")}), frozenset())
    # three in a row in one direction (a failed run in between neither counts nor breaks the row)
    state = next_state([v(1, "up"), v(2, "up", failed=True), v(3, "up"), v(4, "up"), v(5, "up")])
    assert state.shifts == frozenset({("e", "r", "r4", "r1")})
    assert ("e", "r", "r5") in state.excluded


@pytest.mark.parametrize("dialect,median", [("postgres", "PERCENTILE_CONT(0.5) WITHIN GROUP"), ("duckdb", "MEDIAN("),
                                            ("spark", "MEDIAN(")])
def test_one_sql_text_is_written_for_each_engine(dialect, median):
    state = State(frozenset({("o'x", "(volume)", "r1")}), frozenset({("o", "r", "r9", "r7")}))
    sql = band_sql(dialect, ("gold", "mart_data_quality"), state, results=("meta", "assay_check_results"),
                   entities=("orders",))
    assert median in sql
    assert "'o''x'" in sql  # a value with a quote stays one literal
    sqlglot.parse_one(sql, read={"spark": "duckdb"}.get(dialect, dialect))


def test_what_a_band_was_learnt_from_reads_in_the_singular_too():
    import datetime as dt

    from assay.anomalies.history import learnt_text

    def v(season, learnt_from):
        return Verdict("e", VOLUME, "volume", "r9", None, dt.date(2026, 2, 17), 9, False, 1.0, 8, season, learnt_from,
                       1.0, 0.0, 2.0, True, "up")

    def plural(n, word):
        return f"{n} {word}" + ("" if n == 1 else "s")

    assert [learnt_text(v("weekday", 1), plural), learnt_text(v("weekday", 6), plural), learnt_text(v("all", 1), plural)] == \
        ["1 Tuesday", "6 Tuesdays", "1 run"]


def test_the_report_says_which_measures_wait_for_history_as_the_command_does():
    """After a level shift the measure learns anew and judges nothing until 7 runs of the new
    level exist: `assay anomalies` said so, the report's anomalies section said nothing (an outside
    tester). Both read one list now (`summary`'s `waiting`, `not_judged_lines`)."""
    from assay.anomalies.history import latest_of, not_judged_lines, summary
    from assay.cli.common import plural
    from assay.report.html import _anomalies

    history = synthetic.generate(48, 2, weekly=True, events=(Event(VOLUME, 43, "shift", 1.8),))
    verdicts = _verdicts(history)
    latest = latest_of(verdicts)
    said = summary(verdicts, plural)
    assert said["waiting"] == ["orders: volume: not enough history (4 earlier runs to learn from; 7 needed)"]
    assert said["waiting"] == not_judged_lines([v for v in latest.values() if not v.judged], latest, plural)
    assert "orders: volume: not enough history (4 earlier runs to learn from; 7 needed).</p>" in _anomalies(said)
