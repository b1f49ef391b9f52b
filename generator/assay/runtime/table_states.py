"""The state of each table the spec checks, from the warehouse: published, set back, not
published or kept, and why (reference 002 "Keeping a table"; decisions 0514, 0931). `assay table
list|get` print it; the report puts each entity's on top.

A table is `published`, `set_back` (the latest build failed a blocking check: the previous
version is still published, this build's data is not), `not_published` (its first build failed a
blocking check, so it does not exist yet), `kept` (a keep check failed; assay-built readers are
refused until its checks pass) or, on SQLMesh only, `published_failing` (the latest build failed
a blocking check but SQLMesh had evaluated it in place: its rows are what readers see; decision
0932). The state is derived, never stored twice: `kept` from the newest TABLE_KEPT /
TABLE_KEPT_CLEARED event of the table in ``<meta>.assay_events``; otherwise `not_published` when
the table is absent from the warehouse (the why is its newest failed build, or, on SQLMesh, the
environment's latest plan that failed on another table: SQLMesh promotes no view of a failed
plan, decision 1122); when the newest
failed build is the latest run that recorded the table's check results, `set_back`, or
`published_failing` when the table the reader's view shows is the one that build wrote; else
`published`. A table dbt skipped because an entity it reads was not written in the same run
(TABLE_BUILD_FAILED `upstream_failed: <entity>`, decision 0940) is set back or not published with
why `upstream_failed`, naming that entity and the check that failed there; on SQLMesh, which
records nothing for the models it skips, that state is derived from the parent's failed build
(`_skipped_by_sqlmesh`, decision 0963). A failed build is
dbt's TABLE_ROLLED_BACK (never the published table), dbt's TABLE_BUILD_FAILED (a stop, 0935, or
an upstream skip, 0940) or SQLMesh's TABLE_BUILD_FAILED, whose why names the physical table it wrote (sqlmesh_macros/assay_sqlmesh/
build_events.py); the view read is the environment's (`--environment`, else prod). The schemas
are those the build wrote (runtime/built_relations.py).

The tables are the spec's entities with checks (every entity, for the report) and
`tables_version: 1` tables that have checks, any table the events name as kept (a table whose
checks were removed stays kept until it is rebuilt), and any entity a failed build names (a
`fail` rule, the key or conservation audit stopped or set it back, or dbt skipped it for its
parent: those are checks too, decision 0957).
"""

from __future__ import annotations

from typing import Any, Optional

from ..lower.check_reads import upstream_entities
from .check_results import (EVENTS_TABLE, NODE_ERRORED, PROD, SQLMESH_RUN_PREFIXES, CheckResults, moment,
                            run_environment_starts, run_environments)

# A failed build: dbt's (the materialization set the table back) and SQLMesh's (the engine decides;
# its why is `wrote <schema>.<table>`, the physical table it wrote, or `not_written`).
ROLLED_BACK, BUILD_FAILED = "TABLE_ROLLED_BACK", "TABLE_BUILD_FAILED"
CHECK_FAILED = "CHECK_FAILED"
FAILED_BUILDS = (ROLLED_BACK, BUILD_FAILED)
MARKS = ("TABLE_KEPT", "TABLE_KEPT_CLEARED", *FAILED_BUILDS)
WROTE = "wrote "
NOT_WRITTEN = "not_written"  # a SQLMesh build stopped on the staged model, before the table was written
# The why of a dbt build that skipped the table because an entity it reads was not written in the
# same invocation: `upstream_failed: <entity>`, `and N more` after it when several (decision 0940).
UPSTREAM_FAILED = "upstream_failed"
_UPSTREAM = UPSTREAM_FAILED + ": "
# The why of a build that did not write the table because one of its own models errored (its
# staged, reject or entity model: a database error, not a check): `node_errored: <model>`, recorded
# by dbt's on-run-end hook (decision 0940) and SQLMesh's after_all statement (decision 1164).
_ERRORED = NODE_ERRORED + ": "
READ_ONLY = "not built by this project"
# The why of a table absent because the SQLMesh plan that would publish it failed on another table.
PLAN_FAILED = "plan_failed"
# The why of each state a failed SQLMesh build leaves, as dbt's TABLE_ROLLED_BACK says it (decision 0510).
WHY = {"set_back": "previous_version_kept", "not_published": "not_published", "published_failing": "evaluated_in_place"}


def iso_utc(value: Any) -> Optional[str]:
    """A timestamp the warehouse recorded (UTC, without a zone; a datetime or the text of one) in
    ISO 8601 with `Z`, as every JSON output of assay writes timestamps."""
    import datetime as dt

    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return value
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return value.isoformat() + "Z"
    return str(value)


def _spec_tables(project, every_entity: bool = False):
    """{table name: (schema, relation name, built by this project)} of every table with checks in
    `project` (whose schemas are where the build wrote them); with `every_entity`, every entity.
    A `fail` rule is a check of its entity: it stops the build, and `assay checks` reports it then
    (decision 0957)."""
    tables: dict[str, tuple[str, str]] = {}
    for e in project.entities:
        if every_entity or e.declared_checks or e.sql_checks or any(r.disposition == "fail" for r in e.rules):
            tables[e.name] = _entity_table(project, e)
    for t in project.tables:
        if t.declared_checks or any(f"{c.namespace}.{c.table}" == t.name for c in project.sql_checks):
            schema, _, name = t.name.partition(".")
            tables[t.name] = (schema, name, False)
    return tables


def checked_table_names(project) -> set[str]:
    """The names under which a build of `project` records check results and events: its entities and
    the tables its checks read (another project's, sharing the meta schema, are not among them)."""
    return set(_spec_tables(project, every_entity=True))


def current_results(recorded: dict[str, tuple], started: dict[str, str]) -> dict[str, tuple]:
    """{table: (at, run)} of the tables whose latest recorded check results are their latest
    build's: a table whose newest run in the quality history began after its results were recorded
    was built since by a build that recorded none, because the spec it ran declares no check of
    it any more (or only a `fail` rule, which records a result when it stops). Those results, and
    a set-back or stop of their run, are then an earlier build's (an outside tester, session 40:
    a table set back, then rebuilt and published with its checks removed, was still "set back")."""
    return {table: (at, run) for table, (at, run) in recorded.items()
            if table not in started or not moment(started[table])[0] > moment(at)[0]}


def records_check_results(project) -> bool:
    """Whether a build of `project` records a check result of its own: some table has checks (a
    `fail` rule counts, decision 0957). Otherwise only a stop on one of the build's audits does."""
    return bool(_spec_tables(project))


def records_every_build(project) -> bool:
    """Whether every build of `project` records check results: some table has declared checks or
    SQL check files. A `fail` rule records one only when it stops a build (decision 0957)."""
    return any(e.declared_checks or e.sql_checks for e in project.entities) or any(
        t.declared_checks for t in project.tables) or bool(project.sql_checks)


def _entity_table(project, entity) -> tuple[str, str, bool]:
    """(schema, relation name, built by this project) of an entity: its readers' relation."""
    return (project.schema("silver"), f"{entity.name}__current" if entity.scd == "type2" else entity.name, True)


def _events(reader, meta: str) -> list[tuple]:
    """(event_type, run_id, table_name, check_name, why, occurred_at) of the marks, oldest first."""
    from .warehouse import remember

    def ask() -> list[tuple]:
        if not reader.exists(meta, EVENTS_TABLE):
            return []
        marks = ", ".join(f"'{m}'" for m in MARKS)
        rows = reader.query(
            f'select event_type, run_id, table_name, check_name, why, cast(occurred_at as varchar(64)) '
            f'from {reader.relation(meta, EVENTS_TABLE)} where event_type in ({marks})')
        return sorted(rows, key=lambda r: (str(r[5]), r[0]))

    return list(remember(reader, ("table_events", meta), ask))


def failed_builds(reader, meta: str) -> dict[str, set]:
    """{table: the runs that recorded a failed build of it} (TABLE_ROLLED_BACK, TABLE_BUILD_FAILED)."""
    found: dict[str, set] = {}
    for ev in _events(reader, meta):
        if ev[0] in FAILED_BUILDS:
            found.setdefault(ev[2], set()).add(ev[1])
    return found


def _named_by(ev: Optional[tuple], prefix: str) -> Optional[str]:
    """What a dbt TABLE_BUILD_FAILED's why names after `prefix`; None for any other event."""
    if ev is None or ev[0] != BUILD_FAILED or not str(ev[4] or "").startswith(prefix):
        return None
    return str(ev[4])[len(prefix):]


def _upstream(ev: Optional[tuple]) -> Optional[str]:
    """The entity a dbt build that skipped the table names as the one it reads that was not written
    (why `upstream_failed: <entity>[ and N more]`, decision 0940); None for any other event."""
    named = _named_by(ev, _UPSTREAM)
    return None if named is None else named.split(" and ", 1)[0]


def _errored_node(ev: Optional[tuple]) -> Optional[str]:
    """The model of the table's own whose error left it unwritten (why `node_errored: <model>`); None
    for any other event."""
    return _named_by(ev, _ERRORED)


def _not_written(ev: tuple) -> bool:
    """Whether a failed build stopped before the table was written: SQLMesh's staged stop, dbt's
    stopping test (decision 0935), dbt's skip for an upstream entity (decision 0940) or for an
    error of one of the table's own models."""
    return ev[0] == BUILD_FAILED and (ev[4] == NOT_WRITTEN or _upstream(ev) is not None or _errored_node(ev) is not None)


def _upstream_cause(events: list[tuple], ev: tuple) -> dict[str, Any]:
    """What the state of a table dbt skipped for an upstream entity (`ev`) adds: `upstream`, the
    entity it reads that was not written, and `check` / `check_table`, the check that failed in that
    run and the table it is of, found by following the upstream's own failed build (set back,
    kept, stopped) of the same run, and its upstream's where it was skipped in turn. Both are None
    when the upstream recorded nothing in the run (its node errored: dbt's log says why)."""
    upstream = _upstream(ev)
    table, seen = upstream, {ev[2]}
    while table is not None and table not in seen:
        seen.add(table)
        theirs = [e for e in events if e[1] == ev[1] and e[2] == table and e[0] in (*FAILED_BUILDS, "TABLE_KEPT")]
        if not theirs:
            break
        if _upstream(theirs[-1]) is None:
            # `kept`: that table was published and kept by a failing `keep` check, which refuses its
            # readers, not set back (an outside tester, session 49, read "did not pass" as a failure)
            return {"why": UPSTREAM_FAILED, "upstream": upstream, "check": theirs[-1][3], "check_table": table,
                    "kept": theirs[-1][0] == "TABLE_KEPT"}
        table = _upstream(theirs[-1])
    return {"why": UPSTREAM_FAILED, "upstream": upstream, "check": None, "check_table": None}


def _state(name: str, built: bool, present: bool, mark: Optional[tuple], back: Optional[tuple],
           latest_run: Optional[str], started: Optional[str] = None, shown: Optional[bool] = False,
           latest_at: Optional[str] = None, plan_failed: Optional[tuple] = None,
           started_run: Optional[str] = None) -> dict[str, Any]:
    """The state of one table from its marks, its presence and its latest build (see the module
    docstring). A table that records no check results has no latest run there; `started`, when
    known (the report reads it from the mart), is when its latest recorded build began: a failed
    build after it is the latest build's. `shown`: whether the view read shows the table `back`
    (the newest failed build) wrote; None when that cannot be told. `latest_at`: when the latest
    run recorded the table's check results; a SQLMesh build stopped before the table was written
    (`not_written`: a `fail` rule audit of the staged model stops it before any check is
    measured) after it is the latest build. `plan_failed`: the failed SQLMesh build of another table
    that stopped the environment's latest plan (see `_plan_failure`): a table absent with no
    failure of its own is not published because of it, not never built (decision 1122).
    `started_run`: the run `started` times; a failure of that very run is the latest build's,
    whatever the clocks say (a dbt run's start is timed by its first recorded check result,
    which another table of the run may record after this table was set back: session 44)."""
    def state(what: str, ev: Optional[tuple] = None, why: Optional[str] = None) -> dict[str, Any]:
        if why is None and ev is not None:
            why = WHY.get(what, ev[4]) if ev[0] == BUILD_FAILED else ev[4]  # dbt's say it themselves
        return {"table": name, "state": what, "run": ev[1] if ev else None, "check": ev[3] if ev else None,
                "why": why, "since": iso_utc(ev[5]) if ev else None, "built_by_project": built}

    if not built:
        # 002: a table the project only reads is never set back or kept by it; its checks run in
        # a check task before its readers (decision 0520). Unless a model of the project's own
        # builds it with assay's write-audit-publish (decision 0524): its latest build set back
        # (a first one left unpublished) is said so, as an entity's is.
        if back is not None and back[0] == "TABLE_ROLLED_BACK" and back[1] == latest_run:
            return state("set_back" if present else "not_published", back)
        return state("published" if present else "not_published",
                     why=READ_ONLY if present else f"{READ_ONLY}; the table does not exist")
    if mark is not None and mark[0] == "TABLE_KEPT":
        kept = state("kept", mark)
        if back is not None and moment(back[5]) > moment(mark[5]):
            # 002: a set-back leaves the mark, but the latest build did not publish: say so too
            # (an outside tester, session 48)
            kept["latest_set_back"] = {"run": back[1], "check": back[3], "since": iso_utc(back[5])}
        return kept
    if not present:
        if back is None and plan_failed is not None:
            # SQLMesh promotes no view of a plan that failed, whatever it built (decision 1122).
            return {**state("not_published", plan_failed, why=PLAN_FAILED), "failed_table": plan_failed[2],
                    "built_in": latest_run}
        return state("not_published", back, why=None if back else "never built")
    stopped_later = (back is not None and _not_written(back)
                     and latest_at is not None and str(iso_utc(back[5])) >= str(iso_utc(latest_at)))
    if back is not None and (back[1] == latest_run or stopped_later
                             or (latest_run is None and (started is None or back[1] == started_run
                                                         or moment(back[5]) >= moment(started)))):
        # What readers see is the failed build's own rows only where it was evaluated in place
        # (SQLMesh); a view that cannot be read counts as showing them: never claim a set-back
        # that cannot be seen (decision 0932).
        return state("published_failing" if shown is not False else "set_back", back)
    return state("published")


def _plan_failure(events: list[tuple], elsewhere: set, read: str, environments: dict[str, str],
                  latest_recorded: Optional[str]) -> Optional[tuple]:
    """The newest failed SQLMesh build (TABLE_BUILD_FAILED) of the environment read, when its run is
    the environment's latest plan or run: the one whose failure left the environment's views where
    they were (SQLMesh promotes nothing of a failed plan). The latest run is the newest one recorded
    for the environment (RUN_ENVIRONMENT, decision 0936), else, for runs that did not record it, the
    run that recorded check results last. None on dbt (a failed model does not stop another's
    publication: dbt's TABLE_BUILD_FAILED, decisions 0935 and 0940, is of the table it names
    only), and when a later run of the environment may have published."""
    failed = [ev for ev in events if ev[0] == BUILD_FAILED and ev[1] not in elsewhere
              and str(ev[1]).startswith(SQLMESH_RUN_PREFIXES)]
    if not failed:
        return None
    newest = failed[-1]
    ours = [(str(at), run) for run, (env, at) in environments.items() if env == read]
    latest = max(ours)[1] if ours else latest_recorded
    return newest if latest == newest[1] else None


def failed_latest_run(reader, meta: str, environment: Optional[str] = None) -> Optional[dict[str, Any]]:
    """{run, at, table, check} of the newest failed SQLMesh build (TABLE_BUILD_FAILED) of the
    environment read, when no later run of it recorded its start (RUN_ENVIRONMENT) or check
    results: the plan or run evaluated no model downstream of the failure, the mart among them,
    so no entity's quality history has that run (decision 0942). None on dbt, and when a later
    run of the environment may have recorded it."""
    read = environment or PROD
    environments = run_environment_starts(reader, meta)
    elsewhere = {run for run, (env, _at) in environments.items() if env != read}
    failed = [ev for ev in _events(reader, meta) if ev[0] == BUILD_FAILED and ev[1] not in elsewhere
              and str(ev[1]).startswith(SQLMESH_RUN_PREFIXES)]
    if not failed:
        return None
    newest = failed[-1]
    # a later run of the environment (it recorded its start, or check results) may have recorded it
    later = [at for run, (env, at) in environments.items() if env == read and run != newest[1]]
    later += [at for at, run in CheckResults(reader, meta, environment).latest_per_table().values() if run != newest[1]]
    if any(moment(at) > moment(newest[5]) for at in later):
        return None
    return {"run": newest[1], "at": iso_utc(newest[5]), "table": newest[2], "check": newest[3]}


def _wrote(ev: Optional[tuple]) -> Optional[str]:
    """The physical table (`schema.table`) a failed SQLMesh build wrote; None for dbt's set-back and
    for a build stopped before the table was written."""
    if ev is None or ev[0] != BUILD_FAILED or not str(ev[4] or "").startswith(WROTE):
        return None
    return str(ev[4])[len(WROTE):]


def _shown(reader, schema: str, name: str) -> Optional[str]:
    """The physical table (`schema.table`) the view `schema.name` selects from, as SQLMesh's virtual
    layer writes it (`SELECT * FROM <catalog>.<schema>.<table>`, decision 0700); None when it is
    no such view or its definition cannot be read."""
    from .relations import _single_source

    try:
        rows = reader.query("select view_definition from information_schema.views where table_schema = ? and table_name = ?",
                            (schema, name))
    except Exception:  # noqa: BLE001 - an engine without the view: nothing can be told
        return None
    if not rows or not rows[0][0]:
        return None
    sql = str(rows[0][0])
    if not sql.lstrip().lower().startswith("create"):
        sql = f"create view v as {sql}"  # PostgreSQL keeps the query only
    for dialect in ("duckdb", "postgres"):
        found = _single_source(sql.rstrip().rstrip(";"), dialect)
        if found is not None:
            return f"{found[0]}.{found[1]}".lower()
    return None


def table_states(project, reader, every_entity: bool = False, environment: Optional[str] = None) -> list[dict[str, Any]]:
    """One state per table, sorted by name: {table, state, run, check, why, since, built_by_project}.

    `project` has the schemas the build wrote (runtime/built_relations.py); `reader` is a
    `runtime.warehouse.Reader` (query, exists, relation); a table that records no check results is
    timed by when its newest run in the quality history began (`mart_started`, see `_state`);
    `environment`: the SQLMesh environment read (None: prod). A run recorded as planned for
    another environment is not this environment's build (decision 0936): neither its failure nor
    its check results decide the state read here."""
    # Every entity is judged: one without checks that SQLMesh skipped for a failed parent is listed
    # too, set back, as dbt lists it from the event its hook records (an outside tester, session 43).
    with_checks = set(_spec_tables(project, every_entity))
    tables = _spec_tables(project, True)
    meta = project.schema("meta")
    read = environment or PROD
    environments = run_environment_starts(reader, meta)
    elsewhere = {run for run, (env, _at) in environments.items() if env != read}
    mark: dict[str, tuple] = {}
    rolled: dict[str, tuple] = {}
    events = _events(reader, meta)
    for ev in events:
        if ev[1] in elsewhere:
            continue
        (rolled if ev[0] in FAILED_BUILDS else mark)[ev[2]] = ev
    for name, ev in mark.items():
        if ev[0] == "TABLE_KEPT" and name not in with_checks:
            tables.setdefault(name, (project.schema("silver"), name, True))
            with_checks.add(name)
    for e in project.entities:
        # An entity without checks of its own is still stopped or set back by the checks every
        # build runs (a `fail` rule, INGESTION_METADATA, CONSERVATION, KEY_UNIQUE) or skipped for
        # its parent: once a build says so, it is a table with checks (decision 0957).
        if e.name in rolled:
            with_checks.add(e.name)
    from .history_behind import mart_newest_runs, mart_started

    started = mart_started(project, reader)
    started_runs = mart_newest_runs(project, reader)
    recorded = CheckResults(reader, meta, environment).latest_per_table()
    newest = max(recorded.values())[1] if recorded else None
    recorded = current_results(recorded, started)
    latest = {table: run for table, (_at, run) in recorded.items()}
    latest_at = {table: at for table, (at, _run) in recorded.items()}
    plan_failed = _plan_failure(events, elsewhere, read, environments, newest)

    def shown(name: str) -> Optional[bool]:
        """Whether the view read shows the table the newest failed build wrote (see `_state`)."""
        wrote = _wrote(rolled.get(name))
        if wrote is None:
            return False
        view = _shown(reader, tables[name][0], tables[name][1])
        return None if view is None else view == wrote.lower()

    states = [_state(name, tables[name][2], reader.exists(tables[name][0], tables[name][1]), mark.get(name),
                     rolled.get(name), latest.get(name), started.get(name), shown(name), latest_at.get(name),
                     plan_failed, started_runs.get(name))
              for name in sorted(tables)]
    for s in states:
        ev = rolled.get(s["table"])
        if s["state"] in ("set_back", "not_published") and _upstream(ev) is not None and s["run"] == ev[1]:
            s.update(_upstream_cause(events, ev))  # dbt skipped it for an entity it reads (decision 0940)
        elif s["state"] in ("set_back", "not_published") and _errored_node(ev) is not None and s["run"] == ev[1]:
            s.update(why=NODE_ERRORED, node=_errored_node(ev))  # one of its own models errored
    skipped = _skipped_by_sqlmesh(project, states, {**started, **latest_at})
    states = [s for s in states if s["table"] in with_checks or s["table"] in skipped]
    return _unchanged_in_environment(project, reader, states, environment, every_entity)


def _skipped_by_sqlmesh(project, states: list[dict[str, Any]], built_at: dict[str, Any]) -> set[str]:
    """SQLMesh skips every model downstream of one whose blocking audit failed, and records nothing
    for them: an entity that reads (through a referential rule, or a SQL check file that joins it) an entity a SQLMesh build left
    set back, published failing or not published, and that recorded no build of its own since
    (`built_at`: its latest recorded check results, else its newest run in the quality history),
    was not evaluated by that build, so readers see its previous version. It is set back with why
    `upstream_failed`, naming that entity and the check that failed there, as dbt records the same
    skip (decisions 0940, 0963). Followed through chains of readers, parents first. Returns the
    entities it set back."""
    by_name = {s["table"]: s for s in states}
    skipped: set[str] = set()
    failed = {name for name, s in by_name.items()
              if s["state"] in ("set_back", "published_failing", "not_published") and s.get("why") != PLAN_FAILED
              and str(s["run"] or "").startswith(SQLMESH_RUN_PREFIXES)}
    changed = True
    while changed:  # a child set back here may be the parent of another entity
        changed = False
        for e in project.entities:
            s = by_name.get(e.name)
            if s is None or s["state"] not in ("published", "published_failing", "set_back") \
                    or not s["built_by_project"] or s.get("skipped_in"):
                continue
            parents = sorted(set(upstream_entities(e, project)) & failed)  # referential parents, check joins
            # one set back by an earlier build of its own is skipped by a later one as well: that
            # later build is its latest (an outside tester, session 48: `table get` named the
            # earlier run and its own check, fixed since, hiding the parent that now stops it)
            stops = [by_name[p] for p in parents
                     if (e.name not in built_at or moment(built_at[e.name]) < moment(by_name[p]["since"]))
                     and (s["state"] != "set_back" or (s["run"] != by_name[p]["run"]
                                                      and moment(s["since"]) < moment(by_name[p]["since"])))]
            if not stops:
                continue
            parent = stops[0]
            check_table = parent["check_table"] if parent.get("why") == UPSTREAM_FAILED else parent["table"]
            skip = {"run": parent["run"], "check": parent["check"], "why": UPSTREAM_FAILED, "since": parent["since"],
                    "upstream": parent["table"], "check_table": check_table}
            if s["state"] == "published_failing":
                # an earlier build published it failing, in place: readers still see those rows, and
                # the latest build, which skipped it, is not the one that failed it (session 43)
                s["skipped_in"] = skip
            else:
                s.update({"state": "set_back", **skip})
                skipped.add(e.name)
            failed.add(e.name)
            changed = True
    return skipped


def _unchanged_in_environment(project, reader, states: list[dict[str, Any]], environment: Optional[str],
                              every_entity: bool) -> list[dict[str, Any]]:
    """A SQLMesh development environment holds views of the models its plans changed only (SQLMesh's
    default `include_unmodified: false`): a table it has no view of is prod's, unchanged there, and
    its state is prod's, saying so (an outside tester read `department: not published (never
    built)` in dev for a table dev reads from prod)."""
    import dataclasses

    from .sqlmesh_gateway import environment_suffix

    if environment is None or environment == PROD:
        return states
    suffix = environment_suffix(environment)  # SQLMesh's suffix on the schema (decision 0700)
    prod_schemas = tuple((role, schema[: -len(suffix)] if schema.endswith(suffix) else schema)
                         for role, schema in project.schemas)
    if prod_schemas == tuple(project.schemas):
        return states
    prod = dataclasses.replace(project, schemas=prod_schemas)
    here, there = _spec_tables(project, every_entity), _spec_tables(prod, every_entity)
    unchanged = {name for name, (schema, rel, built) in here.items()
                 if built and name in there and not reader.exists(schema, rel) and reader.exists(*there[name][:2])}
    if not unchanged:
        return states
    in_prod = {s["table"]: s for s in table_states(prod, reader, every_entity)}  # prod's own history
    return [{**in_prod[s["table"]], "unchanged_in": environment} if s["table"] in unchanged else s for s in states]


EVENTS_SHOWN = 10  # `table get` shows the table's newest events, this many


def table_events(project, reader, table: str, limit: int = EVENTS_SHOWN) -> list[dict[str, Any]]:
    """The newest `limit` events of `table` in ``<meta>.assay_events``, newest first: {event, run,
    check, why, at} (what set it back, kept it or cleared it, and which checks failed, run by run).
    Events carry names and reasons only, never a value of the data."""
    meta = project.schema("meta")
    if not reader.exists(meta, EVENTS_TABLE):
        return []
    rows = reader.query(
        f'select event_type, run_id, check_name, why, cast(occurred_at as varchar(64)) '
        f'from {reader.relation(meta, EVENTS_TABLE)} where table_name = ?', (table,))
    rows = sorted(rows, key=lambda r: (str(r[4]), r[0], str(r[2])), reverse=True)[:limit]
    envs = run_environments(reader, meta)
    details = _recorded_details(reader, meta, table) if any(r[0] == CHECK_FAILED for r in rows) else {}
    out = []
    for r in rows:
        ev = {"event": r[0], "run": r[1], "check": r[2],
              "why": details.get((r[1], r[2]), r[3]) if r[0] == CHECK_FAILED else r[3], "at": iso_utc(r[4])}
        if str(r[1]) in envs:  # a SQLMesh run that recorded its environment (decision 0936)
            ev["environment"] = envs[str(r[1])]
        out.append(ev)
    return out


def _recorded_details(reader, meta: str, table: str) -> dict[tuple[str, str], str]:
    """{(run, check): 000's detail sentence} of `table`'s recorded check results, rendered by the
    one sentence writer (checks/recorded.py). A CHECK_FAILED event of a check that recorded a
    result says this, whatever the build wrote as its `why` (dbt's package writes a short
    sentence of its own for dbt's error message); an audit records no result and keeps its own."""
    from ..checks.recorded import verdict_of_row

    out: dict[tuple[str, str], str] = {}
    for run, check, kind, spec, measures in CheckResults(reader, meta).rows(
            ("run_id", "check_id", "kind", "check_spec", "measures"), "where table_name = ?", (table,)):
        try:
            out[(run, check)] = verdict_of_row(kind, spec, measures).detail
        except (TypeError, ValueError, KeyError, ArithmeticError):
            continue  # a result this version cannot render keeps the build's own sentence
    return out
