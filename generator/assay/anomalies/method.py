"""The detector's method as data, and the one SQL text that computes its bands on the warehouse.

Per entity, three kinds of measure are read from `gold.mart_data_quality` (one `(entity)`
accounting row and one row per rule, per run):

- `(volume)`: bronze rows loaded since the previous published run. The accounting row counts
  every bronze row the build read (`rows_evaluated + rows_deduped`, the whole staged relation),
  and entities are rebuilt from all of bronze, so one load is the difference between two runs'
  counts. A run whose volume was anomalous and that failed (set back, or stopped) is recorded too
  (decision 0413) but published nothing, so the rows it read count as loaded again by the next
  run, which is measured from the latest earlier run that was not such a refusal (`sequenced`,
  `counted`, `headed`): a refused spike that stays in bronze is refused again, while a run
  stopped by something else, its load judged normal, is the next run's starting point;
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


# Spark inlines every reference to a CTE (analysing, planning and running it again for each), so
# the text is a chain, not a tree: every CTE is read once, except `regimed` (the series with its
# marks: paired with itself once, and read once more for the judged runs' own columns, which are
# too costly for DuckDB to carry through the pairs' windows) and `grouped` (the MAD needs the
# median joined back; PostgreSQL has no median over a window). Hence the run's counts are window
# aggregates over the mart's rows, each mart row yields its measures through a two-row cross join,
# and the state's marks are joined once (a level shift's first run found by partitioning on the
# shift). Decision 1030 has the numbers.
# `seq` is never null; `nulls first` is spelt out so that sqlglot writes no NULLS clause for
# BigQuery, whose window aggregates refuse one.
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
state as (
  __STATE__
),
per_run as (
  select m.entity, m.rule, m.rows_failed, m.run_id,
         min(m.run_started_at) over (partition by m.entity, m.run_id) as started_at,
         min(m.run_date) over (partition by m.entity, m.run_id) as run_date,
         sum(case when m.rule = '(entity)' then m.rows_evaluated else 0 end) over (partition by m.entity, m.run_id) as evaluated,
         sum(case when m.rule = '(entity)' then m.rows_evaluated + m.rows_deduped else 0 end)
           over (partition by m.entity, m.run_id) as bronze,
         sum(case when m.rule = '(entity)' then m.rows_quarantined else 0 end) over (partition by m.entity, m.run_id) as quarantined,
         max(case when m.rule = '(entity)' then 1 else 0 end) over (partition by m.entity, m.run_id) as accounted,
         max(case when m.disposition = 'fail' and m.rows_failed > 0 then 1 else 0 end)
           over (partition by m.entity, m.run_id) as rule_failed
  from mart m
),
measured as (
  select p.entity, p.run_id, p.started_at, p.run_date, p.evaluated, p.bronze,
         case when p.rule <> '(entity)' then p.rule when k.part = 1 then '(volume)' else '(quarantine_rate)' end as measure,
         case when p.rule = '(entity)' and k.part = 1 then 'volume' else 'rate' end as kind,
         case when p.rule_failed = 1 or b.run_id is not null then 1 else 0 end as failed,
         cast(case when p.rule = '(entity)' then p.quarantined else p.rows_failed end as double) / nullif(p.evaluated, 0) as rate
  from per_run p
  cross join (select 1 as part union all select 2 as part) k
  left join (select distinct run_id, entity from blocked) b on b.run_id = p.run_id and b.entity = p.entity
  where p.accounted = 1 and (k.part = 1 or p.rule = '(entity)')
),
sequenced as (
  select m.*,
         case when m.failed = 1 and v.run_id is not null then 1 else 0 end as refused,
         row_number() over (partition by m.entity, m.measure order by m.started_at, m.run_id) as seq
  from measured m
  left join (select distinct entity, run_id from state where measure = '(volume)' and since_run_id is null) v
    on v.entity = m.entity and v.run_id = m.run_id
),
counted as (
  select *,
         count(case when refused = 0 then 1 end)
           over (partition by entity, measure order by seq nulls first rows between unbounded preceding and current row)
           as standing_runs
  from sequenced
),
headed as (
  select *,
         case when standing_runs > 0
              then first_value(bronze) over (partition by entity, measure, standing_runs order by seq nulls first) end
           as standing_bronze
  from counted
),
numbered as (
  select entity, measure, kind, run_id, started_at, run_date, failed, evaluated,
         case when kind = 'volume'
              then cast(bronze - case when refused = 0
                                      then lag(standing_bronze) over (partition by entity, measure order by seq)
                                      else standing_bronze end as double)
              else rate end as observed,
         seq,
         dense_rank() over (order by entity, measure) as series,
         extract(dow from run_date) as weekday
  from headed
),
marks as (
  select x.entity, x.measure, case when k.part = 2 then x.since_run_id else x.run_id end as run_id,
         case when x.since_run_id is null then 'left_out' when k.part = 1 then 'detected' else 'since' end as role,
         x.run_id as shift, x.since_run_id as since
  from state x
  cross join (select 1 as part union all select 2 as part) k
  where k.part = 1 or x.since_run_id is not null
),
tagged as (
  select n.*, k.role,
         min(case when k.role = 'since' then n.seq end) over (partition by n.entity, n.measure, k.shift, k.since) as since_seq
  from numbered n
  left join marks k on k.entity = n.entity and k.measure = n.measure and k.run_id = n.run_id
),
marked as (
  select entity, measure, kind, run_id, started_at, run_date, failed, evaluated, observed, seq, series, weekday,
         max(case when role = 'left_out' then 1 else 0 end) as excluded,
         max(case when role = 'detected' and since_seq is not null then seq end) as detected_seq,
         max(case when role = 'detected' then since_seq end) as start_seq
  from tagged
  group by entity, measure, kind, run_id, started_at, run_date, failed, evaluated, observed, seq, series, weekday
),
regimed as (
  select entity, measure, kind, run_id, started_at, run_date, failed, evaluated, observed, seq, series, weekday, excluded,
         max(start_seq) over (partition by series order by seq nulls first rows between unbounded preceding and 1 preceding)
           as regime_start,
         max(detected_seq) over (partition by series order by seq nulls first rows between unbounded preceding and 1 preceding)
           as regime_detected
  from marked
),
training as (
  select j.series, j.seq, t.observed as t_observed, t.run_date as t_run_date,
         case when t.weekday = j.weekday then 1 else 0 end as same_day,
         row_number() over (partition by j.series, j.seq order by t.seq desc) as recency,
         dense_rank() over (partition by j.series, j.seq, case when t.weekday = j.weekday then 1 else 0 end
                            order by t.run_date desc) as day_recency
  from regimed j
  join regimed t on t.series = j.series and t.seq < j.seq and t.seq >= j.seq - __LOOKBACK__
  where __JUDGE_J__ and j.observed is not null and t.observed is not null and t.failed = 0
    and t.seq >= coalesce(j.regime_start, 0)
    and (t.excluded = 0 or t.seq <= coalesce(j.regime_detected, 0))
),
grouped as (
  select series, seq, t_observed, t_run_date,
         case when recency <= __RECENT__ then 1 else 0 end as in_all,
         case when same_day = 1 and day_recency <= __WEEKDAY_DATES__ then 1 else 0 end as in_day
  from training
  where recency <= __RECENT__ or (same_day = 1 and day_recency <= __WEEKDAY_DATES__)
),
centres as (
  select series, seq,
         median(case when in_all = 1 then t_observed end) as a_centre,
         median(case when in_day = 1 then t_observed end) as d_centre
  from grouped
  group by series, seq
),
spreads as (
  select g.series, g.seq, c.a_centre, c.d_centre,
         nullif(count(case when g.in_all = 1 then 1 end), 0) as a_runs,
         median(case when g.in_all = 1 then abs(g.t_observed - c.a_centre) end) as a_mad,
         nullif(count(case when g.in_day = 1 then 1 end), 0) as d_runs,
         count(distinct case when g.in_day = 1 then g.t_run_date end) as d_dates,
         median(case when g.in_day = 1 then abs(g.t_observed - c.d_centre) end) as d_mad
  from grouped g
  join centres c on c.series = g.series and c.seq = g.seq
  group by g.series, g.seq, c.a_centre, c.d_centre
),
bands as (
  select r.entity, r.measure, r.kind, r.run_id, r.started_at, r.run_date, r.seq, r.failed, r.observed,
         s.a_centre, s.d_centre, s.a_runs, s.a_mad, s.d_runs, s.d_dates, s.d_mad,
         case when s.a_runs is not null then
           greatest(__SIGMAS__ * __MAD_TO_SIGMA__ * s.a_mad,
                    case when r.kind = 'volume'
                         then greatest(__VOLUME_FLOOR__ * abs(s.a_centre), __VOLUME_FLOOR_ROWS__)
                         else greatest(__RATE_FLOOR__, __RATE_FLOOR_RELATIVE__ * s.a_centre,
                                       __RATE_FLOOR_ROWS__ / cast(r.evaluated as double)) end) end as a_half,
         case when s.d_runs is not null then
           greatest(__SIGMAS__ * __MAD_TO_SIGMA__ * s.d_mad,
                    case when r.kind = 'volume'
                         then greatest(__VOLUME_FLOOR__ * abs(s.d_centre), __VOLUME_FLOOR_ROWS__)
                         else greatest(__RATE_FLOOR__, __RATE_FLOOR_RELATIVE__ * s.d_centre,
                                       __RATE_FLOOR_ROWS__ / cast(r.evaluated as double)) end) end as d_own_half
  from regimed r
  left join spreads s on s.series = r.series and s.seq = r.seq
  where __JUDGE_R__
),
day_bands as (
  select b.*,
         case when b.d_runs is null then null
              when b.d_dates >= __SEASONAL_DATES__ then b.d_own_half
              else greatest(b.d_own_half, coalesce(b.a_half * abs(b.d_centre) / nullif(abs(b.a_centre), 0), b.d_own_half))
              end as d_half
  from bands b
),
judged as (
  select entity, measure, kind, run_id, started_at, run_date, seq, failed, observed,
         coalesce(a_runs, 0) as history,
         case when d_runs is not null and d_dates >= __SEASONAL_DATES__ then 'weekday'
              when d_runs is null or a_runs is null then 'all'
              when observed between a_centre - a_half and a_centre + a_half then 'all'
              when observed between d_centre - d_half and d_centre + d_half then 'weekday'
              when abs(observed - a_centre) <= abs(observed - d_centre) then 'all'
              else 'weekday' end as season,
         a_runs, a_centre, a_half, d_runs, d_centre, d_half
  from day_bands
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
        "__JUDGE_R__": "1 = 1" if sources is None else f"r.run_id in ({sources.judged_run})",
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
