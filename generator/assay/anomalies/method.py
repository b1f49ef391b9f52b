"""The detector's method as data, and the one SQL text that computes its bands on the warehouse.

Per entity, three kinds of measure are read from `gold.mart_data_quality` (one `(entity)`
accounting row and one row per rule, per run):

- `(volume)`: bronze rows loaded since the previous run. The accounting row counts every bronze
  row the build read (`rows_evaluated + rows_deduped`, the whole staged relation), and entities
  are rebuilt from all of bronze, so one load is the difference between two runs' counts;
- `(quarantine_rate)`: `rows_quarantined / rows_evaluated`;
- each rule's failure rate: its `rows_failed / rows_evaluated` of the same run.

For every run, the band is learnt from earlier runs only (never the judged one), and only from
runs that were neither failed nor anomalous: median and MAD, computed here in SQL. Which earlier
runs were anomalous is the state (`State`) the sequential pass in `detect.py` feeds back; this
module only turns a state into SQL. The text is written once, in DuckDB's spelling, and sqlglot
writes it for the connection's engine (DESIGN.md section 1: no per-engine copies).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import sqlglot

from ..identifiers import quote_relation

VOLUME, QUARANTINE_RATE = "(volume)", "(quarantine_rate)"
# The dialect whose text each connection takes (a Spark connection transpiles DuckDB's itself).
_WRITE = {"duckdb": "duckdb", "postgres": "postgres", "spark": "duckdb"}
# 1.4826 * MAD estimates the standard deviation of normally distributed values.
MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class Method:
    """The detector's settings (docs/anomalies.md explains each; benchmarks/anomalies.py measured them)."""

    min_history: int = 7  # fewer eligible earlier runs than this: "not enough history", no verdict
    sigmas: float = 4.0  # band half-width in robust standard deviations (1.4826 * MAD)
    recent_runs: int = 28  # the all-runs band learns from at most this many latest eligible runs
    weekday_dates: int = 10  # the weekday band learns from at most this many latest same-weekday dates
    seasonal_dates: int = 6  # same-weekday dates needed before the weekday band alone judges
    lookback: int = 120  # earlier runs considered at all (bounds the work per judged run)
    volume_floor: float = 0.15  # the volume band is at least +-15% of its median ...
    volume_floor_rows: int = 10  # ... and at least +-10 rows wide
    rate_floor: float = 0.002  # a rate band is at least +-0.2 percentage points ...
    rate_floor_relative: float = 0.5  # ... and +-50% of its median ...
    rate_floor_rows: int = 5  # ... and +-5 rows of the judged run's evaluated rows
    shift_runs: int = 3  # this many anomalies in a row in one direction: a new level, learnt from


METHOD = Method()


@dataclass(frozen=True)
class State:
    """What the sequential pass learnt: runs left out of later training as anomalous, and level
    shifts (a run after `detected` learns only from `since` on, the shift's own runs included)."""

    excluded: frozenset = frozenset()  # {(entity, measure, run_id)}
    shifts: frozenset = frozenset()  # {(entity, measure, detected_run_id, since_run_id)}


_SQL = """
with mart as (
  select entity, rule, disposition, rows_evaluated, rows_failed, rows_quarantined, rows_deduped,
         run_id, run_date, run_started_at
  from __MART__
  where __ENTITY__
),
blocked as (
  __BLOCKED__
),
runs as (
  select entity, run_id, min(run_started_at) as started_at, min(run_date) as run_date,
         sum(case when rule = '(entity)' then rows_evaluated else 0 end) as evaluated,
         sum(case when rule = '(entity)' then rows_evaluated + rows_deduped else 0 end) as bronze,
         sum(case when rule = '(entity)' then rows_quarantined else 0 end) as quarantined,
         max(case when rule = '(entity)' then 1 else 0 end) as accounted,
         max(case when disposition = 'fail' and rows_failed > 0 then 1 else 0 end) as rule_failed
  from mart
  group by entity, run_id
),
facts as (
  select r.entity, r.run_id, r.started_at, r.run_date, r.evaluated, r.quarantined,
         cast(r.bronze - lag(r.bronze) over (partition by r.entity order by r.started_at, r.run_id) as double) as loaded,
         case when r.rule_failed = 1 or b.run_id is not null then 1 else 0 end as failed
  from runs r
  left join (select distinct run_id, entity from blocked) b on b.run_id = r.run_id and b.entity = r.entity
  where r.accounted = 1
),
series as (
  select entity, '(volume)' as measure, 'volume' as kind, run_id, started_at, run_date, failed,
         loaded as observed, evaluated
  from facts
  union all
  select entity, '(quarantine_rate)', 'rate', run_id, started_at, run_date, failed,
         cast(quarantined as double) / nullif(evaluated, 0), evaluated
  from facts
  union all
  select m.entity, m.rule, 'rate', f.run_id, f.started_at, f.run_date, f.failed,
         cast(m.rows_failed as double) / nullif(f.evaluated, 0), f.evaluated
  from mart m
  join facts f on f.entity = m.entity and f.run_id = m.run_id
  where m.rule <> '(entity)'
),
numbered as (
  select s.*,
         row_number() over (partition by s.entity, s.measure order by s.started_at, s.run_id) as seq,
         dense_rank() over (order by s.entity, s.measure) as series,
         extract(dow from s.run_date) as weekday
  from series s
),
state as (
  __STATE__
),
marked as (
  select n.*, case when x.run_id is null then 0 else 1 end as excluded
  from numbered n
  left join (select distinct entity, measure, run_id from state where since_run_id is null) x
    on x.entity = n.entity and x.measure = n.measure and x.run_id = n.run_id
),
shifts as (
  select d.entity, d.measure, d.seq as detected_seq, s.seq as start_seq
  from state x
  join numbered d on d.entity = x.entity and d.measure = x.measure and d.run_id = x.run_id
  join numbered s on s.entity = x.entity and s.measure = x.measure and s.run_id = x.since_run_id
),
regime as (
  select j.entity, j.measure, j.seq, max(h.start_seq) as start_seq, max(h.detected_seq) as detected_seq
  from numbered j
  join shifts h on h.entity = j.entity and h.measure = j.measure and h.detected_seq < j.seq
  group by j.entity, j.measure, j.seq
),
training as (
  select j.entity, j.measure, j.seq as judged_seq, t.observed, t.run_date,
         case when t.weekday = j.weekday then 1 else 0 end as same_day,
         row_number() over (partition by j.series, j.seq order by t.seq desc) as recency,
         dense_rank() over (partition by j.series, j.seq, case when t.weekday = j.weekday then 1 else 0 end
                            order by t.run_date desc) as day_recency
  from marked j
  join marked t on t.entity = j.entity and t.measure = j.measure
               and t.seq < j.seq and t.seq >= j.seq - __LOOKBACK__
  left join regime g on g.entity = j.entity and g.measure = j.measure and g.seq = j.seq
  where j.observed is not null and t.observed is not null and t.failed = 0 and __JUDGE_J__
    and t.seq >= coalesce(g.start_seq, 0)
    and (t.excluded = 0 or t.seq <= coalesce(g.detected_seq, 0))
),
grouped as (
  select entity, measure, judged_seq, 'all' as grp, observed, run_date
  from training where recency <= __RECENT__
  union all
  select entity, measure, judged_seq, 'day', observed, run_date
  from training where same_day = 1 and day_recency <= __WEEKDAY_DATES__
),
centres as (
  select entity, measure, judged_seq, grp, median(observed) as centre, count(*) as runs,
         count(distinct run_date) as dates
  from grouped
  group by entity, measure, judged_seq, grp
),
spreads as (
  select c.entity, c.measure, c.judged_seq, c.grp, c.centre, c.runs, c.dates,
         median(abs(g.observed - c.centre)) as mad
  from centres c
  join grouped g on g.entity = c.entity and g.measure = c.measure and g.judged_seq = c.judged_seq and g.grp = c.grp
  group by c.entity, c.measure, c.judged_seq, c.grp, c.centre, c.runs, c.dates
),
bands as (
  select s.*,
         greatest(__SIGMAS__ * __MAD_TO_SIGMA__ * s.mad,
                  case when n.kind = 'volume'
                       then greatest(__VOLUME_FLOOR__ * abs(s.centre), __VOLUME_FLOOR_ROWS__)
                       else greatest(__RATE_FLOOR__, __RATE_FLOOR_RELATIVE__ * s.centre,
                                     __RATE_FLOOR_ROWS__ / cast(n.evaluated as double)) end) as half
  from spreads s
  join numbered n on n.entity = s.entity and n.measure = s.measure and n.seq = s.judged_seq
),
day_bands as (
  select d.*,
         case when d.dates >= __SEASONAL_DATES__ then d.half
              else greatest(d.half, coalesce(a.half * abs(d.centre) / nullif(abs(a.centre), 0), d.half)) end as band_half
  from bands d
  left join bands a on a.entity = d.entity and a.measure = d.measure and a.judged_seq = d.judged_seq and a.grp = 'all'
  where d.grp = 'day'
),
judged as (
  select n.entity, n.measure, n.kind, n.run_id, n.started_at, n.run_date, n.seq, n.failed, n.observed,
         coalesce(a.runs, 0) as history,
         case when d.dates >= __SEASONAL_DATES__ then 'weekday'
              when d.runs is null or a.runs is null then 'all'
              when n.observed between a.centre - a.half and a.centre + a.half then 'all'
              when n.observed between d.centre - d.band_half and d.centre + d.band_half then 'weekday'
              when abs(n.observed - a.centre) <= abs(n.observed - d.centre) then 'all'
              else 'weekday' end as season,
         a.runs as a_runs, a.centre as a_centre, a.half as a_half,
         d.runs as d_runs, d.centre as d_centre, d.band_half as d_half
  from numbered n
  left join bands a on a.entity = n.entity and a.measure = n.measure and a.judged_seq = n.seq and a.grp = 'all'
  left join day_bands d on d.entity = n.entity and d.measure = n.measure and d.judged_seq = n.seq
),
picked as (
  select entity, measure, kind, run_id, started_at, run_date, seq, failed, observed, history, season,
         case when season = 'weekday' then d_runs else a_runs end as learnt_from,
         case when season = 'weekday' then d_centre else a_centre end as centre,
         case when season = 'weekday' then d_centre - d_half else a_centre - a_half end as low,
         case when season = 'weekday' then d_centre + d_half else a_centre + a_half end as high
  from judged
),
clipped as (
  select entity, measure, kind, run_id, started_at, run_date, seq, failed, observed, history, season,
         learnt_from, centre,
         case when kind = 'rate' then greatest(low, 0) else low end as low,
         case when kind = 'rate' then least(high, 1) else high end as high
  from picked
  where __JUDGE__
)
select entity, measure, kind, run_id, started_at, run_date, seq, failed, observed, history, season,
       learnt_from, centre, low, high,
       case when observed is not null and history >= __MIN_HISTORY__ then 1 else 0 end as judged,
       case when observed is null or history < __MIN_HISTORY__ then null
            when observed > high then 'up'
            when observed < low then 'down' end as direction
from clipped
order by entity, measure, seq
"""

# The columns of one row of the query's answer, in order (detect.Verdict has the same fields).
COLUMNS = ("entity", "measure", "kind", "run_id", "run_started_at", "run_date", "seq", "failed", "observed",
           "history", "season", "learnt_from", "median", "low", "high", "judged", "direction")


def _literal(value: Optional[str]) -> str:
    """A string literal in standard SQL (a quote doubled), or a typed NULL."""
    return "cast(null as varchar)" if value is None else "'" + value.replace("'", "''") + "'"


def _state_sql(state: State) -> str:
    rows = [(e, m, r, None) for e, m, r in sorted(state.excluded)] + sorted(state.shifts)
    empty = ("select cast(null as varchar) as entity, cast(null as varchar) as measure, "
             "cast(null as varchar) as run_id, cast(null as varchar) as since_run_id where 1 = 0")
    if not rows:
        return empty
    values = ",\n    ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    return (f"{empty}\n  union all\n  select cast(entity as varchar), cast(measure as varchar), cast(run_id as varchar), "
            f"cast(since_run_id as varchar)\n  from (values\n    {values}) as v(entity, measure, run_id, since_run_id)")


def _blocked_sql(results: Optional[tuple[str, str]]) -> str:
    """Runs a blocking check failed in (an entity's required or block check), from the results table."""
    if results is None:
        return "select cast(null as varchar) as run_id, cast(null as varchar) as entity where 1 = 0"
    return (f"select run_id, table_name as entity from {quote_relation('duckdb', *results)} "
            "where not passed and enforcement in ('required', 'block')")


@dataclass(frozen=True)
class Sources:
    """Where a build-time anomaly check (assay.lower.anomaly) points the detector's query instead
    of the mart and the state: names of relations (CTEs) the enclosing query defines, each
    holding the columns the part it replaces selects, and the one run to judge."""

    mart: str  # the mart's columns, the current run's rows included
    blocked: str  # (run_id, entity) of runs that failed
    state: str  # (entity, measure, run_id, since_run_id) of runs left out, as `State` spells them
    judged_run: str  # a query returning the run id to judge (one row)


def band_sql(dialect: str, mart: tuple[str, str], state: State = State(), *, method: Method = METHOD,
             results: Optional[tuple[str, str]] = None, entities: Iterable[str] = (),
             sources: Optional[Sources] = None) -> str:
    """The query that answers, for every run of every measure of the mart at `mart` (schema, table),
    the band learnt from earlier eligible runs under `state`, in the engine's own spelling.

    `results` (schema, table) is the check results table, when it exists: a run whose blocking
    check failed there is never learnt from. `entities` limits the answer (empty: all entities).
    With `sources`, the same text reads the relations it names instead of `mart`, `results` and
    `state`, and answers for one run only (the build-time check; `mart` is then unused).
    """
    names = sorted(set(entities))
    where = "1 = 1" if not names else "entity in (" + ", ".join(_literal(n) for n in names) + ")"
    params = {
        "__MART__": quote_relation("duckdb", *mart) if sources is None else sources.mart,
        "__ENTITY__": where,
        "__BLOCKED__": _blocked_sql(results) if sources is None else f"select run_id, entity from {sources.blocked}",
        "__STATE__": _state_sql(state) if sources is None else (
            f"select entity, measure, run_id, since_run_id from {sources.state}"),
        "__JUDGE_J__": "1 = 1" if sources is None else f"j.run_id in ({sources.judged_run})",
        "__JUDGE__": "1 = 1" if sources is None else f"run_id in ({sources.judged_run})",
        "__LOOKBACK__": str(method.lookback),
        "__RECENT__": str(method.recent_runs),
        "__WEEKDAY_DATES__": str(method.weekday_dates),
        "__SEASONAL_DATES__": str(method.seasonal_dates),
        "__MIN_HISTORY__": str(method.min_history),
        "__SIGMAS__": repr(float(method.sigmas)),
        "__MAD_TO_SIGMA__": repr(MAD_TO_SIGMA),
        "__VOLUME_FLOOR__": repr(float(method.volume_floor)),
        "__VOLUME_FLOOR_ROWS__": repr(float(method.volume_floor_rows)),
        "__RATE_FLOOR__": repr(float(method.rate_floor)),
        "__RATE_FLOOR_RELATIVE__": repr(float(method.rate_floor_relative)),
        "__RATE_FLOOR_ROWS__": repr(float(method.rate_floor_rows)),
    }
    text = _SQL
    # Longest first, so that no placeholder is a prefix of another when replaced.
    for key in sorted(params, key=len, reverse=True):
        text = text.replace(key, params[key])
    return sqlglot.transpile(text, read="duckdb", write=_WRITE[dialect])[0]
