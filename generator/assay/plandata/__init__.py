"""`assay plan OLD NEW --data`: what the new spec does to the data in the warehouse now (issue 20, item 4).

Decision 1020: the numbers come from the real next build, run in a sandbox (plandata/sandbox.py),
never from a re-spelling of the pipeline. In the sandbox assay
1. reads what the last build left (each entity's staged relation and reject table),
2. generates the NEW spec into the project copy and runs `dbt build` (after `dbt deps` only when
   the project has no installed packages), exactly as the user's next build would,
3. reads again and compares (plandata/measure.py): per entity and per rule, the rows newly
   quarantined, flagged or failing, and the open reject rows the build resolves,
4. runs `assay replay` for each entity of the plan's replay_scope, parents first, and one more
   `dbt build`, and counts what the replayed rows became (kept: brought back),
then throws the sandbox away. The user's warehouse is only read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from ..errors import ProjectError
from ..ir.model import Project
from ..plan import Plan
from .measure import EntityImpact, entity_impact, read_snapshot, replayed_routes

ROLES = ("bronze", "silver", "gold", "meta")


@dataclass
class DataPlan:
    """The next build's and replay's effect on each entity, as measured in the sandbox."""

    engine: str
    build_ok: bool
    build_summary: str
    replay_build_ok: Optional[bool]  # the build after the replays (None: nothing was replayed)
    entities: dict = field(default_factory=dict)  # name -> EntityImpact

    def as_dict(self) -> dict:
        return {
            "engine": self.engine,
            "build": {"ok": self.build_ok, "summary": self.build_summary},
            "replay_build": None if self.replay_build_ok is None else {"ok": self.replay_build_ok},
            "entities": {name: e.as_dict() for name, e in sorted(self.entities.items())},
        }


def _published(results: list[dict], entity: str) -> Optional[bool]:
    for r in results:
        uid = str(r.get("unique_id", ""))
        if uid.split(".")[0] in ("model", "snapshot") and uid.rsplit(".", 1)[-1] == entity:
            return r.get("status") == "success"
    return None


# dbt reads these from the environment before its flags; in the sandbox they would point it at the
# user's own project, profile, artifacts or logs (DBT_TARGET_PATH: it would overwrite the manifest).
_DBT_PLACES = ("DBT_TARGET_PATH", "DBT_LOG_PATH", "DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_PACKAGES_INSTALL_PATH")


def _sandbox_dbt(project_dir: Path, *args: str):
    """`dbt <args>` in the sandbox, as runtime.dbt.run_dbt runs it, with none of the environment
    variables that name another place."""
    import os
    import subprocess

    from ..runtime.dbt import dbt_executable, stop_child

    env = {k: v for k, v in os.environ.items() if k not in _DBT_PLACES}
    env.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    env.setdefault("DBT_USE_COLORS", "false")
    cmd = [dbt_executable(), *args, "--project-dir", str(project_dir), "--profiles-dir", str(project_dir)]
    with subprocess.Popen(cmd, cwd=project_dir, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            out, err = proc.communicate()
        except KeyboardInterrupt:
            stop_child(proc)
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def _run(path: Path, *args: str):
    from ..runtime.dbt import run_dbt_step

    run = run_dbt_step(path, *args, run=_sandbox_dbt)
    if not run.ok and not run.checks_failed():
        raise ProjectError(f"the next build could not run (`dbt {' '.join(args)}` in a copy of the project with the new "
                           "spec): " + " | ".join(run.error_lines(12)))
    return run


def plan_data(new: Project, new_spec_dir: Path, project_dir: Path, plan: Plan, *, profiles_dir: Optional[Path] = None,
              target: Optional[str] = None, step: Callable[[str], None] = lambda text: None) -> DataPlan:
    """Run the next build of `new` and the replays `plan` names in a sandbox of `project_dir`'s
    warehouse, and say per entity and rule what they did (see the module docstring)."""
    from ..api import generate_dbt_project
    from ..replay import replay
    from ..runtime.built_relations import built_project
    from ..runtime.operator import open_warehouse
    from ..runtime.warehouse import SQLMESH, project_kind
    from .sandbox import refuse_unbuilt, sandbox

    if project_kind(project_dir) == SQLMESH:
        raise ProjectError(f"{project_dir} is a SQLMesh project; `assay plan --data` runs the next build on dbt projects "
                           "only so far (decision 1020). Without --data the plan still classifies the change.")
    built = built_project(new, project_dir, profiles_dir=profiles_dir, target=target)
    schemas = sorted({built.schema(role) for role in ROLES})
    step("copying the warehouse into a sandbox")
    with sandbox(project_dir, schemas, profiles_dir=profiles_dir, target=target) as sb:
        with open_warehouse(new, sb.path, profiles_dir=sb.path) as wh:
            before = {e.name: read_snapshot(wh.reader, wh.project, e) for e in new.entities}
        refuse_unbuilt([] if any(s.built for s in before.values())
                       else [f"{built.schema('silver')}.{e.name}__staged" for e in new.entities])
        step("generating the new spec into the sandbox")
        result = generate_dbt_project(new_spec_dir, sb.path, project=new)
        if result.report.refused:
            raise ProjectError("`assay generate` would refuse to write the new spec into the project ("
                               + ", ".join(result.report.conflicts + result.report.modified)
                               + "); resolve that first, as `assay generate` says.")
        step("running the next build in the sandbox (dbt build)")
        if not (sb.path / "dbt_packages").is_dir():
            _run(sb.path, "deps")
        build = _run(sb.path, "build")
        entities: dict[str, EntityImpact] = {}
        with open_warehouse(new, sb.path, profiles_dir=sb.path, read_only=False) as wh:
            for e in new.entities:
                impact = entity_impact(e, before[e.name], read_snapshot(wh.reader, wh.project, e))
                impact.published = _published(build.results, e.name)
                entities[e.name] = impact
            replayed = [name for name in plan.replay_scope if name in entities and new.entity(name).has_reject]
            already = {name: replayed_routes(wh.reader, wh.project, new.entity(name)) for name in replayed}
            for name in replayed:
                step(f"replaying {name} in the sandbox")
                rep = replay(wh.conn, wh.dialect, wh.project, wh.project.entity(name))
                entities[name].replay = {"in_bronze": rep.in_bronze, "redelivered": sum(rep.redelivered.values()),
                                         "superseded": rep.superseded, "unrecoverable": rep.unrecoverable}
        again = None
        if replayed:
            step("running the build after the replays in the sandbox (dbt build)")
            again = _run(sb.path, "build")
            with open_warehouse(new, sb.path, profiles_dir=sb.path) as wh:
                for name in replayed:
                    now = replayed_routes(wh.reader, wh.project, new.entity(name))
                    # rows an earlier replay delivered were judged already: only this replay's rows count
                    gone = {r: now.get(r, 0) - already[name].get(r, 0) for r in ("kept", "quarantined", "failed", "deduped")}
                    entities[name].replay.update({"brought_back": gone["kept"], "deduped": gone["deduped"],
                                                  "still_quarantined": gone["quarantined"] + gone["failed"]})
        return DataPlan(sb.engine, build.ok, build.summary(), None if again is None else again.ok, entities)
