"""Generated quality histories with known anomalies, to measure the detector and to test it.

A history is the rows a mart would hold for one entity over daily runs: the `(entity)` accounting
row (bronze growing by one load per run, a few deduped rows) and one row per rule. Loads and rates
follow a level, optionally a weekly pattern (weekend loads smaller, weekend rates higher), and
multiplicative noise; injected events change one measure at one run (a spike or a drop) or from
one run on (a level shift). Everything is drawn from `random.Random(seed)`: fixed seeds give the
same history on every machine (benchmarks/anomalies.py, tests/unit/test_anomalies.py).
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Optional

from .method import QUARANTINE_RATE, VOLUME

ENTITY = "orders"
# rule name -> (disposition, usual failure rate on weekdays)
RULES = {"amount_range": ("quarantine", 0.004), "status_in_set": ("flag", 0.02), "email_pattern": ("flag", 0.0)}
START = dt.date(2026, 1, 5)  # a Monday
MART_COLUMNS = ("entity", "mapping", "rule", "disposition", "rows_evaluated", "rows_failed", "rows_quarantined",
                "rows_deduped", "run_id", "run_date", "run_started_at")
MART_DDL = ("create table {table} (entity varchar, mapping varchar, rule varchar, disposition varchar, "
            "rows_evaluated bigint, rows_failed bigint, rows_quarantined bigint, rows_deduped bigint, "
            "run_id varchar, run_date date, run_started_at timestamp)")


@dataclass(frozen=True)
class Event:
    """An injected anomaly: `measure` at run `run` (0-based) multiplied by `factor`; `kind` is
    `spike`, `drop` or `shift` (a shift keeps the factor for every later run)."""

    measure: str
    run: int
    kind: str
    factor: float


@dataclass
class History:
    """One generated history: its mart rows, the injected events, its length and its run ids."""

    rows: list[tuple]
    events: list[Event]
    runs: int
    run_ids: list[str] = field(default_factory=list)


def run_id(i: int) -> str:
    """The generated id of run `i` (0-based): sorts like the runs."""
    return f"run-{i:04d}"


def generate(runs: int, seed: int, *, weekly: bool = True, events: tuple[Event, ...] = (), load: int = 10_000,
             noise: float = 0.04, rate_noise: float = 0.08, entity: str = ENTITY,
             failed_runs: tuple[int, ...] = ()) -> History:
    """`runs` daily runs of one entity. `failed_runs` get a `fail` rule that fired (never learnt from)."""
    rnd = random.Random(seed)
    rows: list[tuple] = []
    bronze, deduped = 0, 0
    shift = {m: 1.0 for m in (VOLUME, QUARANTINE_RATE, *RULES)}
    for i in range(runs):
        day = START + dt.timedelta(days=i)
        weekend = weekly and day.weekday() >= 5
        factor = dict(shift)
        for e in events:
            if e.run == i:
                if e.kind == "shift":
                    shift[e.measure] *= e.factor
                    factor[e.measure] = shift[e.measure]
                else:
                    factor[e.measure] *= e.factor
        size = load * (0.4 if weekend else 1.0) * factor[VOLUME] * rnd.gauss(1.0, noise)
        new = max(int(round(size)), 0)
        bronze += new
        deduped += int(new * 0.01)
        evaluated = bronze - deduped

        def rate(base: float, measure: str) -> int:
            r = base * (1.5 if weekend else 1.0) * factor[measure] * max(rnd.gauss(1.0, rate_noise), 0.0)
            return min(int(round(evaluated * min(r, 1.0))), evaluated)

        rid = run_id(i)
        started = dt.datetime.combine(day, dt.time(6, 0))
        quarantined = rate(0.01, QUARANTINE_RATE)
        rows.append((entity, None, "(entity)", "(entity)", evaluated, 0, quarantined, deduped, rid, day, started))
        for name, (disposition, base) in RULES.items():
            failed = rate(base, name)
            if name == "email_pattern":
                # A rule that almost never fires: 0 rows, now and then 1 among a million.
                failed = 1 if rnd.random() < 0.1 else 0
            rows.append((entity, "m_orders", name, disposition, 0, failed, 0, 0, rid, day, started))
        if i in failed_runs:
            rows.append((entity, "m_orders", "id_not_null", "fail", 0, 3, 0, 0, rid, day, started))
    return History(rows, list(events), runs, [run_id(i) for i in range(runs)])


@dataclass(frozen=True)
class Scenario:
    """A named family of histories: `histories` seeds, lengths drawn in 30-120 runs."""

    name: str
    weekly: bool
    kinds: tuple[str, ...]  # event kinds to inject: spike, drop, shift
    events_per_history: int = 0
    load: int = 10_000


SCENARIOS = (
    Scenario("flat, clean", weekly=False, kinds=()),
    Scenario("weekly, clean", weekly=True, kinds=()),
    Scenario("weekly, large tables (1M rows a load), clean", weekly=True, kinds=(), load=1_000_000),
    Scenario("weekly, spikes", weekly=True, kinds=("spike",), events_per_history=4),
    Scenario("weekly, drops", weekly=True, kinds=("drop",), events_per_history=4),
    Scenario("weekly, level shifts", weekly=True, kinds=("shift",), events_per_history=1),
    Scenario("flat, spikes and drops", weekly=False, kinds=("spike", "drop"), events_per_history=4),
)

# The size of each kind of event, per measure: what a data engineer would want to hear about.
SIZES = {"spike": 3.0, "drop": 0.25, "shift": 1.8}
MEASURES = (VOLUME, QUARANTINE_RATE, "amount_range", "status_in_set")


def scenario_history(scenario: Scenario, seed: int, runs: Optional[int] = None) -> History:
    """One history of `scenario`: length in 30-120 runs and event places drawn from `seed`.

    Events fall after the first 14 runs (a band needs history), at least 4 runs apart, and a
    level shift at least 10 runs before the end (so its new level can be learnt).
    """
    rnd = random.Random(seed * 7919 + len(scenario.name))
    n = runs if runs is not None else rnd.randint(30, 120)
    events: list[Event] = []
    taken: list[int] = []
    for _ in range(scenario.events_per_history):
        kind = rnd.choice(scenario.kinds)
        last = n - (10 if kind == "shift" else 1)
        places = [i for i in range(14, last) if all(abs(i - t) >= 4 for t in taken)]
        if kind == "shift":
            places = [i for i in places if all(i < t for t in taken)] or places
        if not places:
            break
        at = rnd.choice(places)
        taken.append(at)
        measure = rnd.choice(MEASURES)
        size = SIZES[kind]
        if measure != VOLUME and kind == "drop":
            size = 0.0  # a rate that drops to nothing: a rule that silently stopped firing
        events.append(Event(measure, at, kind, size))
    return generate(n, seed, weekly=scenario.weekly, events=tuple(sorted(events, key=lambda e: e.run)),
                    load=scenario.load)


def insert_rows(conn, table: str, history: History, placeholder: str = "?") -> None:
    """Insert `history`'s rows into the mart `table` (an existing one: a real build's, too)."""
    marks = ", ".join([placeholder] * len(MART_COLUMNS))
    conn.cursor().executemany(f"insert into {table} ({', '.join(MART_COLUMNS)}) values ({marks})", history.rows)


def load_into(conn, table: str, history: History, placeholder: str = "?") -> None:
    """Create `table` as a mart and insert `history`'s rows through a DB-API connection."""
    conn.cursor().execute(MART_DDL.format(table=table))
    insert_rows(conn, table, history, placeholder)


@dataclass(frozen=True)
class Score:
    """How the detector did on one history: events found, alarms no event explains, runs judged."""

    events: int
    hits: int
    false_alarms: int
    judged_runs: int
    missed: tuple[Event, ...] = ()
    false: tuple[tuple[str, int], ...] = ()  # (measure, run) of each false alarm


def score(history: History, verdicts, shift_runs: int = 3) -> Score:
    """Compare `verdicts` (detect.Verdict of this history) with the injected events.

    A spike or a drop is hit when its measure is flagged at its run in the event's direction. A
    level shift is hit when its measure is flagged in its direction within its first 3 runs (one
    that starts on a weekend is seen when the weekday runs come), and its alarms during its first
    `shift_runs + 3` runs belong to it. Every other flagged (measure, run) is a false alarm; the
    count is over all measures of the entity, so per 100 judged runs it is what an engineer
    reading the output would see.
    """
    index = {rid: i for i, rid in enumerate(history.run_ids)}
    flagged = {(v.measure, index[v.run_id]): v.direction for v in verdicts if v.anomalous}
    explained: set = set()
    hits, missed = 0, []
    for e in history.events:
        want = "up" if e.factor > 1 else "down"
        window = 3 if e.kind == "shift" else 1
        if any(flagged.get((e.measure, e.run + k)) == want for k in range(window)):
            hits += 1
        else:
            missed.append(e)
        span = shift_runs + 3 if e.kind == "shift" else 1
        explained.update((e.measure, e.run + k) for k in range(span))
    false = sorted(k for k in flagged if k not in explained)
    judged = len({index[v.run_id] for v in verdicts if v.judged})
    return Score(len(history.events), hits, len(false), judged, tuple(missed), tuple(false))
