"""The detector: bands from SQL (method.py), and the sequential rule of what later runs learn from.

Whether run k is anomalous depends on which earlier runs were, because an anomalous run is left
out of every later band. SQL answers the bands for a given set of left-out runs (`State`);
`next_state` (pure, over the small per-run answer, never over the warehouse's rows) derives the
set the answer implies; the two alternate until the set no longer changes. That fixed point is
the sequential definition: run k's verdict depends only on the state of runs before k, so every
round settles at least the first run it still got wrong, and the loop ends within as many rounds
as there are runs (in practice two to four).

A level shift: `shift_runs` anomalies in a row in one direction (failed runs skipped, a run that
was not judged or was normal breaks the row) are taken as a new level. Runs after the last of
them learn only from the first of them on, those runs included, so an alarm does not ring
forever after a real change; until enough runs of the new level exist, it says so.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from .method import COLUMNS, METHOD, Method, State, band_sql

Query = Callable[[str], list[tuple]]


@dataclass(frozen=True)
class Verdict:
    """One run of one measure: what was observed and the band learnt before it."""

    entity: str
    measure: str  # `(volume)`, `(quarantine_rate)` or a rule name
    kind: str  # `volume` or `rate`
    run_id: str
    run_started_at: Any
    run_date: Any
    seq: int  # the run's place in this measure's history, from 1
    failed: bool  # a `fail` rule fired or a blocking check failed: never learnt from
    observed: Optional[float]
    history: int  # eligible earlier runs available (at most Method.recent_runs)
    season: str  # the band used: `weekday` (same weekday's runs) or `all` (all recent runs)
    learnt_from: Optional[int]
    median: Optional[float]
    low: Optional[float]
    high: Optional[float]
    judged: bool  # it had a value and at least Method.min_history eligible earlier runs
    direction: Optional[str]  # `up`, `down`, or None (inside the band, or not judged)

    @property
    def anomalous(self) -> bool:
        """Whether the observed value left the band."""
        return self.direction is not None


def _number(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def _verdict(row: tuple) -> Verdict:
    rec = dict(zip(COLUMNS, row))
    return Verdict(
        entity=str(rec["entity"]), measure=str(rec["measure"]), kind=str(rec["kind"]), run_id=str(rec["run_id"]),
        run_started_at=rec["run_started_at"], run_date=rec["run_date"], seq=int(rec["seq"]), failed=bool(rec["failed"]),
        observed=_number(rec["observed"]), history=int(rec["history"] or 0), season=str(rec["season"]),
        learnt_from=None if rec["learnt_from"] is None else int(rec["learnt_from"]), median=_number(rec["median"]),
        low=_number(rec["low"]), high=_number(rec["high"]), judged=bool(rec["judged"]), direction=rec["direction"],
    )


def next_state(verdicts: Iterable[Verdict], method: Method = METHOD) -> State:
    """The runs later bands must leave out, and the level shifts, that `verdicts` imply (pure)."""
    excluded: set = set()
    shifts: set = set()
    series: dict[tuple[str, str], list[Verdict]] = {}
    for v in verdicts:
        series.setdefault((v.entity, v.measure), []).append(v)
    for (entity, measure), runs in series.items():
        streak: list[Verdict] = []
        for v in sorted(runs, key=lambda r: r.seq):
            if v.failed:
                # never learnt from already; neither starts nor breaks a row of anomalies. Left out
                # all the same when anomalous: a refused anomalous volume is counted again by the
                # next run (method.py, `sequenced`), as the build-time check reads its recorded result
                if v.anomalous:
                    excluded.add((entity, measure, v.run_id))
                continue
            if not v.anomalous:
                streak = []
                continue
            excluded.add((entity, measure, v.run_id))
            if streak and streak[-1].direction != v.direction:
                streak = []
            streak.append(v)
            if len(streak) == method.shift_runs:
                shifts.add((entity, measure, v.run_id, streak[0].run_id))
                streak = []
    return State(frozenset(excluded), frozenset(shifts))


def detect(query: Query, dialect: str, mart: tuple[str, str], *, method: Method = METHOD,
           results: Optional[tuple[str, str]] = None, entities: Iterable[str] = ()) -> list[Verdict]:
    """Every run of every measure in the mart, judged against the band of its eligible earlier runs.

    `query(sql)` runs one query on the warehouse; `mart` and `results` are (schema, table) pairs.
    """
    entities = tuple(entities)
    state = State()
    rounds = 0
    while True:
        rows = query(band_sql(dialect, mart, state, method=method, results=results, entities=entities))
        verdicts = [_verdict(r) for r in rows]
        found = next_state(verdicts, method)
        rounds += 1
        if found == state:
            return verdicts
        if rounds > max((v.seq for v in verdicts), default=0) + 1:  # pragma: no cover - see the module docstring
            raise RuntimeError("the anomaly detector's rounds did not settle; this is a bug in assay")
        state = found


def iso(value: Any) -> Optional[str]:
    """A date or timestamp as ISO 8601 text (a driver may hand back either, or text)."""
    if value is None:
        return None
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return str(value)
