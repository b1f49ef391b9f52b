"""Whether an entity's quality history is older than its latest build, read in one place for every
command that shows the history (`assay report`, `assay anomalies`; decisions 0942, 0945).

`gold.mart_data_quality` gets no row of a build dbt skipped the mart in (the entity's own
ingestion-metadata test stopped it, or its staged model was skipped; its own `fail` rule's stop
records, decision 1162), of a build a selection left the mart out of, nor, on SQLMesh, of an
entity its ingestion-metadata audit stopped or of the entities below a stopped one (SQLMesh
evaluates nothing downstream of a failed audit; decisions 0969, 1143, 1162). Counts, trends and anomaly verdicts
read from the mart are then an earlier run's. This module tells which entities that is so for,
from what the builds recorded besides the mart: the check results (runtime/check_results.py), the
state of each table (runtime/table_states.py) and, on SQLMesh, the environment's latest failed
plan or run; and says it in one sentence.
"""

from __future__ import annotations

from typing import Any, Optional

MART = "mart_data_quality"


def latest_builds(project, reader, environment: Optional[str], outcomes: dict[str, dict]) -> dict[str, dict]:
    """{entity: {run, at[, failed_on]}} of its latest build assay knows of, whatever the mart
    recorded: the newest of the run that last recorded its check results, the failed build its
    state names (`outcomes`: {table: its state}, table_states.table_states; set back, not
    published, kept, published failing) and, on SQLMesh, the environment's latest plan or run when
    it failed (`failed_on` the table it failed on). An entity with none is absent: nothing tells
    of a build the mart missed. `at` is ISO 8601 (UTC, `Z`)."""
    from .check_results import CheckResults, moment
    from ..ir.referential import reach, referential_edges
    from .table_states import failed_latest_run, iso_utc

    meta = project.schema("meta")
    found: dict[str, dict] = {}
    for table, (at, run) in CheckResults(reader, meta, environment).latest_per_table().items():
        found[table] = {"run": run, "at": at}
    for table, o in outcomes.items():
        if o.get("run") and o.get("since") and o.get("state") != "published":
            if table not in found or moment(o["since"]) > moment(found[table]["at"]):
                found[table] = {"run": o["run"], "at": o["since"]}
    # SQLMesh: the environment's latest plan or run failed on a table. Each entity's history is a
    # part of its own (decision 0969), so that run recorded none for the entity it failed on and
    # the entities below it, which SQLMesh skipped; the others it judged (and recorded) or did
    # not evaluate at all (a plan inside an interval already run evaluates only what changed).
    failed = failed_latest_run(reader, meta, environment)
    if failed is not None:
        names = {e.name for e in project.entities}
        # the entity it failed on and every child below it (a referential child's staged model
        # reads its parent, so SQLMesh skipped it)
        below = reach({failed["table"]}, referential_edges(project)) if failed["table"] in names else set()
        for name in sorted(below):
            if name not in found or moment(failed["at"]) > moment(found[name]["at"]):
                found[name] = {"run": failed["run"], "at": failed["at"], "failed_on": failed["table"]}
    return {t: {**b, "at": iso_utc(b["at"])} for t, b in found.items()}


def run_starts(reader, meta: str) -> dict[str, Any]:
    """{run: the earliest time assay knows it ran}: its recorded start (SQLMesh's RUN_ENVIRONMENT)
    or its first check result. SQLMesh's mart stamps a run with its execution time, an
    interval's end, not when it ran: a run's order is told by these."""
    from .check_results import CheckResults, moment, run_environment_starts
    from .warehouse import remember

    def ask() -> dict[str, Any]:
        starts: dict[str, Any] = {run: at for run, (_env, at) in run_environment_starts(reader, meta).items()}
        for run, at in CheckResults(reader, meta).rows(("run_id", "cast(recorded_at as varchar(64))")):
            if run not in starts or moment(at) < moment(starts[run]):
                starts[run] = at
        return starts

    return dict(remember(reader, ("run_starts", meta), ask))


def behind(recorded: Optional[tuple[str, Any]], build: Optional[dict], starts: dict[str, Any]) -> Optional[dict]:
    """{run, at[, failed_on]} of the entity's latest build when it is a later run than `recorded`,
    (run id, run_started_at) of the newest run its quality history holds: that build recorded no
    row there, so what is read from the history is older. None when the history is the latest
    build's, or nothing says otherwise. The history's run is timed by `starts` where known
    (SQLMesh's mart stamps its execution time), else by the mart's run_started_at (dbt's start of
    the invocation)."""
    from .check_results import moment

    if build is None or recorded is None or build["run"] == recorded[0]:
        return None
    # times compared as times: the same moment spelt two ways is not later
    if moment(build["at"])[0] <= moment(starts.get(recorded[0], recorded[1]))[0]:
        return None
    return dict(build)


def histories_behind(project, reader, environment: Optional[str], recorded: dict[str, tuple[str, Any]],
                     outcomes: Optional[dict[str, dict]] = None) -> dict[str, dict]:
    """{entity: {run, at[, failed_on]}} for each entity of `recorded` ({entity: (run id,
    run_started_at) of the newest run the mart holds for it}) whose latest build is a later run
    (`behind`). `project` has the schemas the build wrote, `reader` is a runtime.warehouse.Reader
    (or anything with its query, exists and relation); `outcomes` the table states when the caller
    has read them (the report), else they are read here."""
    from .table_states import table_states

    if not recorded:
        return {}
    if outcomes is None:
        outcomes = {s["table"]: s for s in table_states(project, reader, every_entity=True, environment=environment)}
    builds = latest_builds(project, reader, environment, outcomes)
    starts = run_starts(reader, project.schema("meta"))
    out = {}
    for entity, run in sorted(recorded.items()):
        found = behind(run, builds.get(entity), starts)
        if found is not None:
            out[entity] = found
    return out


def behind_sentence(found: dict, recorded_run: Optional[str]) -> str:
    """What a reader of the history is told when it is behind (`behind`): `quality history is
    older than the latest run: its latest build, run R, recorded no row in mart_data_quality; the
    latest there is run H` (on SQLMesh `the latest run R failed on T and recorded no row ...`)."""
    which = (f"the latest run {found['run']} failed on {found['failed_on']} and" if found.get("failed_on")
             else f"its latest build, run {found['run']},")
    return (f"quality history is older than the latest run: {which} recorded no row in {MART}; "
            f"the latest there is run {recorded_run}")


def mart_started(project, reader) -> dict[str, str]:
    """{entity: when its newest run in the quality history began}, for `_state`'s `started` and the
    report's checks (a later build that recorded no check result ends a stop's reign). The
    newest run is the mart's (its own clock orders its runs); it is timed by the run's recorded
    start where assay has one (history_behind.run_starts: SQLMesh's mart stamps a run with its
    execution time, not when it ran, and a failed build's event carries the wall clock, decision
    0957), else by the mart's run_started_at (dbt's start of the invocation)."""
    return {entity: at for entity, (_run, at) in _mart_newest(project, reader).items()}


def mart_newest_runs(project, reader) -> dict[str, str]:
    """{entity: the run id of its newest run in the quality history} (see `mart_started`)."""
    return {entity: run for entity, (run, _at) in _mart_newest(project, reader).items()}


def _mart_newest(project, reader) -> dict[str, tuple[str, str]]:
    from .check_results import moment
    from .table_states import iso_utc
    from .warehouse import remember

    gold = project.schema("gold")

    def ask() -> dict[str, tuple[str, str]]:
        if not reader.exists(gold, MART):
            return {}
        rows = reader.query(f"select entity, run_id, cast(run_started_at as varchar(64)) from {reader.relation(gold, MART)} "
                            "where rule = '(entity)'")
        newest: dict[str, tuple] = {}
        for entity, run, at in rows:
            if entity not in newest or moment(at) > moment(newest[entity][1]):
                newest[entity] = (run, at)
        starts = run_starts(reader, project.schema("meta"))
        return {entity: (run, iso_utc(starts.get(run, at))) for entity, (run, at) in newest.items()}

    return dict(remember(reader, ("mart_newest", gold, project.schema("meta")), ask))
