"""`assay plan OLD NEW --data`: what the new spec does to the data in the warehouse now (issue 20, item 4).

Decision 1020: the numbers come from the real next build, run in a sandbox (plandata/sandbox.py),
never from a re-spelling of the pipeline. In the sandbox assay
1. reads what the last build left (each entity's staged relation and reject table),
2. generates the NEW spec into the project copy and runs the next build as the user would
   (plandata/steps.py: `dbt build`; on SQLMesh `sqlmesh plan`, then `sqlmesh run` at the next
   interval, when the forward-only reject tables take the change in),
3. reads again and compares (plandata/measure.py): per entity and per rule, the rows newly
   quarantined, flagged or failing, and the open reject rows the build resolves,
4. runs `assay replay` for each entity of the plan's replay_scope, parents first, and, when a
   replay re-delivered a row, the build after it, and counts what the replayed rows became
   (kept: brought back),
then throws the sandbox away. The user's warehouse is only read.
"""

from __future__ import annotations

import datetime as dt
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..errors import AssayUsageError
from ..ir.model import Project
from ..plan import Plan, moved_schemas
from ..privacy import holds_private
from .measure import EntityImpact, entity_impact, read_snapshot, replayed_routes

ROLES = ("bronze", "silver", "gold", "meta")


@dataclass
class DataPlan:
    """The next build's and replay's effect on each entity, as measured in the sandbox."""

    engine: str
    build_ok: bool
    build_summary: str
    replay_build_ok: Optional[bool]  # the build after the replays (None: not run, as no replay re-delivered a row)
    entities: dict = field(default_factory=dict)  # name -> EntityImpact
    target: str = "dbt"  # dbt | sqlmesh

    def as_dict(self) -> dict:
        return {
            "engine": self.engine,
            "target": self.target,
            "build": {"ok": self.build_ok, "summary": self.build_summary},
            "replay_build": None if self.replay_build_ok is None else {"ok": self.replay_build_ok},
            "entities": {name: e.as_dict() for name, e in sorted(self.entities.items())},
        }


def plan_data(new: Project, new_spec_dir: Path, project_dir: Path, plan: Plan, *, profiles_dir: Optional[Path] = None,
              target: Optional[str] = None, execution_time: Optional[dt.datetime] = None,
              step: Callable[[str], None] = lambda text: None) -> DataPlan:
    """Run the next build of `new` and the replays `plan` names in a sandbox of `project_dir`'s
    warehouse, and say per entity and rule what they did (see the module docstring)."""
    from ..replay import replay
    from ..runtime.built_relations import built_project
    from ..runtime.operator import open_warehouse
    from ..runtime.warehouse import SQLMESH, project_kind
    from .sandbox import refuse_unbuilt, sandbox, sqlmesh_sandbox
    from .steps import DbtSteps, SqlmeshSteps

    sqlmesh = project_kind(project_dir) == SQLMESH
    if not sqlmesh and execution_time is not None:
        raise AssayUsageError("--execution-time is the time of a SQLMesh plan; a dbt project's next build has none.")
    if sqlmesh and profiles_dir is not None:
        raise AssayUsageError(f"{project_dir} is a SQLMesh project: its warehouse is its gateway, so --profiles-dir (a dbt "
                              "option) does not apply; pass --target GATEWAY to pick another gateway.")
    moved = moved_schemas(plan)
    if moved:
        # The next build reads or writes another schema than the deployed spec's build did: there is
        # nothing there to compare it with (decision 0997), and the plan above already says every
        # entity is built anew.
        raise AssayUsageError(f"the new spec moves a schema ({'; '.join(moved)}), so its next build starts from nothing "
                              "there and every entity is built anew (the plan without --data says so); --data compares "
                              "the next build with what the deployed spec built, in the same schemas: run `assay plan` "
                              "without --data.")
    built = built_project(new, project_dir, profiles_dir=profiles_dir, target=target)
    schemas = sorted({built.schema(role) for role in ROLES})
    step("copying the warehouse into a sandbox")
    made = (sqlmesh_sandbox(project_dir, target, tuple(schemas)) if sqlmesh
            else sandbox(project_dir, schemas, profiles_dir=profiles_dir, target=target))
    with made as sb, ExitStack() as stack:
        run = None
        if sb.engine == "spark":
            from .sparkcopy import spark_session

            # ONE Spark for the builds, the replays and the reads (decision 0841): a JVM start is ~20 s
            run = stack.enter_context(spark_session(sb.path, sb.relocation)).dbt
        private = holds_private(new)
        steps = SqlmeshSteps(execution_time, sb.dialect, private) if sqlmesh else DbtSteps(run, private)
        # a sandbox's own profile (dbt) or config (SQLMesh) points at the copy
        where = {} if sqlmesh else {"profiles_dir": sb.path}
        with open_warehouse(new, sb.path, **where) as wh:
            before = {e.name: read_snapshot(wh.reader, wh.project, e) for e in new.entities}
        refuse_unbuilt([] if any(s.built for s in before.values())
                       else [f"{built.schema('silver')}.{e.name}__staged" for e in new.entities])
        step("generating the new spec into the sandbox")
        steps.generate(new_spec_dir, sb.path, new)
        step("running the next build in the sandbox" + (" (sqlmesh plan, then run)" if sqlmesh else " (dbt build)"))
        build = steps.build(sb.path)
        entities: dict[str, EntityImpact] = {}
        with open_warehouse(new, sb.path, read_only=False, **where) as wh:
            for e in new.entities:
                impact = entity_impact(e, before[e.name], read_snapshot(wh.reader, wh.project, e))
                impact.published = build.published(e.name)
                impact.kept = build.kept(e.name)
                impact.failures = build.failures(e.name)
                if sqlmesh and not build.ok and build.stops:
                    # nothing was applied: the tables hold the last build's rows, so the audits that
                    # stopped the plan are all that is known of the next one
                    impact.measured = False
                    impact.stops = tuple(s for s in build.stops if _entity_of(s[0]) == e.name)
                entities[e.name] = impact
            replayed = [name for name in plan.replay_scope if name in entities and new.entity(name).has_reject]
            already = {name: replayed_routes(wh.reader, wh.project, new.entity(name)) for name in replayed}
            for name in replayed:
                step(f"replaying {name} in the sandbox")
                rep = replay(wh.conn, wh.dialect, wh.project, wh.project.entity(name))
                entities[name].replay = {"in_bronze": rep.in_bronze, "redelivered": sum(rep.redelivered.values()),
                                         "superseded": rep.superseded, "unrecoverable": rep.unrecoverable}
            # the reject tables as the replays leave them: the build after them resolves open rows
            # that were never re-delivered too (a child still in bronze whose parent the replay
            # brings back: an outside tester, session 37, saw 13 rows leave where 6 were announced)
            replayed_before = {name: read_snapshot(wh.reader, wh.project, new.entity(name)) for name in replayed}
        again = None
        if not any(entities[name].replay["redelivered"] for name in replayed):
            # Nothing came back into bronze: a build after the replays would judge what the next
            # build judged, so it is not run and brings nothing back (a whole build saved).
            for name in replayed:
                entities[name].replay.update({"brought_back": 0, "deduped": 0, "still_quarantined": 0,
                                              "leave_reject": {"admitted": 0, "deduped": 0}})
        # A failed SQLMesh plan leaves the environment unfinalized: `sqlmesh run` would wait for a
        # plan that never comes, so nothing is run after it (the replays say what they bring back).
        elif build.ok or not sqlmesh:
            step("running the build after the replays in the sandbox" + (" (sqlmesh run)" if sqlmesh else " (dbt build)"))
            again = steps.rebuild(sb.path)
            with open_warehouse(new, sb.path, **where) as wh:
                for name in replayed:
                    now = replayed_routes(wh.reader, wh.project, new.entity(name))
                    # rows an earlier replay delivered were judged already: only this replay's rows count
                    gone = {r: now.get(r, 0) - already[name].get(r, 0) for r in ("kept", "quarantined", "failed", "deduped")}
                    entities[name].replay.update({"brought_back": gone["kept"], "deduped": gone["deduped"],
                                                  "still_quarantined": gone["quarantined"] + gone["failed"]})
                    left = entity_impact(new.entity(name), replayed_before[name],
                                         read_snapshot(wh.reader, wh.project, new.entity(name))).leave_reject
                    entities[name].replay["leave_reject"] = {k: left.get(k, 0) for k in ("admitted", "deduped")}
        return DataPlan(sb.engine, build.ok, build.summary, None if again is None else again.ok, entities,
                        target="sqlmesh" if sqlmesh else "dbt")


def _entity_of(model: str) -> str:
    """The entity a generated SQLMesh model belongs to: `silver.order__staged` -> `order`."""
    name = model.rsplit(".", 1)[-1]
    for suffix in ("__staged", "__reject", "__current"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
