"""The anomalies of a built warehouse's quality history, read once for every command that shows
them (`assay anomalies`, `assay report`), and how a verdict reads (docs/anomalies.md).

`read_verdicts` runs the detector (assay.anomalies.detect) over the warehouse the operator core
opened (runtime/operator.py::open_warehouse): `gold.mart_data_quality` as the build wrote it, and
`<meta>.assay_check_results` for the runs a blocking check failed in. The rest turns verdicts
into what the outputs print: the measure's name, a record for JSON, the latest run per measure.
"""

from __future__ import annotations

from typing import Any, Optional

from ..runtime.table_states import iso_utc  # with `Z`, as the report spells the same run
from .detect import Verdict, detect, iso
from .method import METHOD, QUARANTINE_RATE, VOLUME

MART = "mart_data_quality"
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def read_verdicts(wh: Any, entities: tuple[str, ...] = ()) -> Optional[list[Verdict]]:
    """Every run of every measure of `entities` (default: all) judged against its history, or
    None when the warehouse holds no quality history yet (no mart). `wh` is the core's Warehouse."""
    from ..runtime.check_results import RESULTS_TABLE

    gold, meta = wh.project.schema("gold"), wh.project.schema("meta")
    if not wh.reader.exists(gold, MART):
        return None
    results = (meta, RESULTS_TABLE) if wh.reader.exists(meta, RESULTS_TABLE) else None
    cur = wh.conn.cursor()

    def query(sql: str) -> list[tuple]:
        # No parameters: names are quoted and values are literals in the text sqlglot wrote.
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]

    return detect(query, wh.dialect, (gold, MART), results=results, entities=entities)


def behind_of(wh: Any, verdicts: list[Verdict]) -> dict[str, dict]:
    """{entity: {run, at[, failed_on]}} of each entity among `verdicts` whose latest build recorded
    no row in the mart, so that its latest run judged here is an earlier one
    (runtime/history_behind.py, the report's reading too; decisions 0942, 0945)."""
    from ..runtime.history_behind import histories_behind

    newest: dict[str, Verdict] = {}
    for v in verdicts:
        if v.measure == QUARANTINE_RATE and (v.entity not in newest or v.seq > newest[v.entity].seq):
            newest[v.entity] = v
    recorded = {entity: (v.run_id, v.run_started_at) for entity, v in newest.items()}
    return histories_behind(wh.project, wh.reader, wh.environment, recorded)


def runs_recorded(wh: Any) -> Optional[dict[str, int]]:
    """{entity: runs recorded in the mart}, or None without a mart. One cheap query: the report
    asks it first, and runs the detector only when some entity has enough runs for a verdict (on
    Spark a round of the detector costs about 20 s whatever the history's length)."""
    gold = wh.project.schema("gold")
    if not wh.reader.exists(gold, MART):
        return None
    rows = wh.reader.query(f"select entity, count(distinct run_id) from {wh.reader.relation(gold, MART)} group by entity")
    return {str(entity): int(n) for entity, n in rows}


def report_verdicts(wh: Any) -> tuple[Optional[list[Verdict]], dict[str, int]]:
    """(the detector's verdicts, or [] when no entity has more runs than the method needs to judge
    one, or None without a mart; the runs recorded per entity)."""
    runs = runs_recorded(wh)
    if runs is None:
        return None, {}
    if max(runs.values(), default=0) <= METHOD.min_history:
        return [], runs
    return read_verdicts(wh), runs


def measure_of(v: Verdict) -> tuple[str, Optional[str]]:
    """(measure, rule) as the outputs name them: `volume`, `quarantine_rate`, or `failure_rate` and the rule."""
    if v.measure == VOLUME:
        return "volume", None
    if v.measure == QUARANTINE_RATE:
        return "quarantine_rate", None
    return "failure_rate", v.measure


def measure_label(v: Verdict) -> str:
    """`volume`, `quarantine_rate`, or `<rule> failure_rate`."""
    measure, rule = measure_of(v)
    return f"{rule} failure_rate" if rule else measure


def as_record(v: Verdict, latest: bool) -> dict:
    """One flagged run as `--json` prints it (ISO 8601 dates, the band as [low, high])."""
    measure, rule = measure_of(v)
    return {
        "entity": v.entity, "measure": measure, "rule": rule, "run_id": v.run_id, "run_date": iso(v.run_date),
        "run_started_at": iso_utc(v.run_started_at), "observed": v.observed, "band": [v.low, v.high], "median": v.median,
        "learnt_from": v.learnt_from, "season": v.season, "direction": v.direction, "failed_run": v.failed,
        "latest": latest,
    }


def latest_of(verdicts: list[Verdict]) -> dict[tuple[str, str], Verdict]:
    """{(entity, measure): the verdict of its latest run}."""
    out: dict[tuple[str, str], Verdict] = {}
    for v in verdicts:
        key = (v.entity, v.measure)
        if key not in out or v.seq > out[key].seq:
            out[key] = v
    return out


def value_text(v: Verdict, x: Optional[float]) -> str:
    """An observed value or a band's edge as people read it: rows with thousands, rates in percent."""
    if x is None:
        return "-"
    if v.kind == "volume":
        return f"{x:,.0f}"
    return f"{100 * x:.3g}%"


def learnt_text(v: Verdict, plural) -> str:
    """What the band was learnt from: `6 Wednesdays` (the weekday band) or `28 runs`."""
    if v.season == "weekday" and hasattr(v.run_date, "weekday"):
        day = _WEEKDAYS[v.run_date.weekday()]
        return f"{v.learnt_from} {day}s" if v.learnt_from != 1 else f"1 {day}"
    return plural(v.learnt_from or 0, "run")


def summary(verdicts: Optional[list[Verdict]], plural, runs: Optional[dict[str, int]] = None) -> dict:
    """What the report shows of the history: `flagged` (every anomalous run, oldest first, with the
    texts the page prints), `latest` ({entity: the measures its latest run is anomalous on}),
    `thin` ({entity: runs recorded} for entities whose latest run could not be judged: too little
    history), `waiting` (the `not enough history` lines of the other entities' measures that could
    not judge their latest run, as `assay anomalies` prints them) and `judged` (runs judged in all). `verdicts` None: no history (`available` False);
    `runs` (runs recorded per entity) names the thin entities the detector was not run for."""
    if verdicts is None:
        return {"available": False, "flagged": [], "latest": {}, "thin": {}, "waiting": [], "judged": 0}
    latest = latest_of(verdicts)
    latest_runs = {(v.entity, v.run_id) for v in latest.values()}
    flagged = sorted((v for v in verdicts if v.anomalous), key=lambda v: (str(v.run_started_at), v.entity, v.measure))
    records = [{**as_record(v, (v.entity, v.run_id) in latest_runs), "label": measure_label(v),
                "observed_text": value_text(v, v.observed), "band_text": f"[{value_text(v, v.low)}, {value_text(v, v.high)}]",
                "learnt_text": learnt_text(v, plural)} for v in flagged]
    now_anomalous: dict[str, list[str]] = {}
    for r in records:
        if r["latest"]:
            now_anomalous.setdefault(r["entity"], []).append(
                f"{r['label']} {r['direction']} (observed {r['observed_text']}, band {r['band_text']}, "
                f"learnt from {r['learnt_text']})")
    thin = {entity: n for entity, n in sorted((runs or {}).items()) if entity not in {v.entity for v in verdicts}}
    for entity in sorted({v.entity for v in verdicts}):
        mine = [v for k, v in latest.items() if k[0] == entity]
        if mine and not any(v.judged for v in mine):
            thin[entity] = max(v.seq for v in mine)
    # measures of an entity judged otherwise that could not judge its latest run, said as `assay
    # anomalies` says them (a level shift learning anew, a rule added later)
    waiting = not_judged_lines([v for v in latest.values() if not v.judged and v.entity not in thin], latest, plural)
    return {"available": True, "flagged": records, "latest": now_anomalous, "thin": thin, "waiting": waiting,
            "judged": sum(1 for v in verdicts if v.judged)}


# A rate of a run that evaluated no rows does not exist (docs/anomalies.md): more history would not
# judge it, so it is not said to want history (a source that never loaded, probe Q6).
NO_RATE = "not judged: its latest run evaluated no rows, so it has no rate"


def no_value(v: Verdict) -> bool:
    """A rate of a run that evaluated no rows: there is none to judge."""
    return v.observed is None and v.kind == "rate"


def not_judged_lines(thin: list[Verdict], latest: dict[tuple[str, str], Verdict], plural) -> list[str]:
    """`not enough history` lines of `thin`, the latest verdicts that judged nothing: one per entity
    when none of its measures could judge its latest run (saying how many runs it has), else one
    per measure (a rule added later, a level shift learning anew). `assay anomalies` prints them,
    and the report the per-measure ones (`summary`'s `waiting`), so both say the same."""
    lines = []
    for entity in sorted({v.entity for v in thin}):
        mine = [v for v in thin if v.entity == entity]
        if len(mine) == sum(1 for k in latest if k[0] == entity):
            runs = max(v.seq for v in latest.values() if v.entity == entity)
            lines.append(f"{entity}: not enough history ({plural(runs, 'run')} recorded; a run is judged once "
                         f"{METHOD.min_history} earlier runs can be learnt from)")
            continue
        for v in mine:
            measure, rule = measure_of(v)
            lines.append(f"{entity}: {f'rule {rule}' if rule else measure}: " + (
                NO_RATE if no_value(v) else
                f"not enough history ({plural(v.history, 'earlier run')} to learn from; {METHOD.min_history} needed)"))
    return lines
