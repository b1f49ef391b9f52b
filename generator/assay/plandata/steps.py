"""The next build, as each target runs it, in a sandbox (decision 1020).

- dbt: `assay generate dbt` of the new spec, `dbt build` (after `dbt deps` only when no package
  is installed); after the replays, `dbt build` again.
- SQLMesh: `assay generate sqlmesh` of the new spec, `sqlmesh plan --auto-apply` at the plan's
  execution time, then `sqlmesh run` at the next tick of the models' cron, when the forward-only
  reject tables take the change in (docs/sqlmesh.md, "Rule changes"); after the replays, `sqlmesh
  run` at the tick after that. SQLMesh runs in this process, its console silenced (the plan's
  output is assay's).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import ProjectError
from ..privacy import engine_message


@dataclass(frozen=True)
class Outcome:
    """What one build step did: whether it passed, dbt's summary line, each entity's publication."""

    ok: bool
    summary: str = ""
    results: tuple = ()  # dbt's node results of the run
    otherwise: Optional[bool] = None  # what `published` says of an entity the results do not name
    # SQLMesh: the blocking audits that failed a plan, (model, audit, rule or None, rows); its tables
    # then hold the last build's rows, not the next one's (nothing is applied)
    stops: tuple = ()

    def _result(self, entity: str) -> Optional[dict]:
        for r in self.results:
            uid = str(r.get("unique_id", ""))
            if uid.split(".")[0] in ("model", "snapshot") and uid.rsplit(".", 1)[-1] == entity:
                return r
        return None

    def published(self, entity: str) -> Optional[bool]:
        """Whether the build published `entity`: dbt's result of its model or snapshot (a table a
        keep check kept was published: its node fails after the publish); on SQLMesh every entity
        is published when the plan and run passed, none when the plan failed (it is applied whole
        or not at all), and a failed run does not say which."""
        r = self._result(entity)
        if r is None:
            return self.otherwise
        return r.get("status") == "success" or self.kept(entity)

    def failures(self, entity: str) -> tuple:
        """What stopped or kept `entity` in a dbt build, as dbt's results say it: the entity node's
        CHECK_FAILED / TABLE_KEPT lines (the check and its sentence) and the names of its failing
        tests (a `fail` rule's, its ingestion metadata's). `--data` named none of them, only that the
        entity was not published (an outside tester, session 44)."""
        from ..runtime.dbt import CHECK_OUTCOMES

        out = []
        r = self._result(entity)
        if r is not None and r.get("status") == "error":
            out += [line.strip() for line in (r.get("message") or "").splitlines()
                    if any(line.strip().startswith(word) for word in CHECK_OUTCOMES)]
        for t in self.results:
            uid = str(t.get("unique_id", ""))
            name = uid.split(".")[2] if uid.startswith("test.") and uid.count(".") >= 2 else ""
            if name and t.get("status") in ("fail", "error") and (f"__{entity}__" in name or name.endswith(f"__{entity}")):
                out.append(f"{name}: {t.get('failures') or 0} failing rows")
        return tuple(out)

    def kept(self, entity: str) -> bool:
        """Whether a failing keep check kept `entity` after the build published it (dbt only)."""
        from ..runtime.dbt import TABLE_KEPT

        r = self._result(entity)
        return r is not None and r.get("status") == "error" and TABLE_KEPT in (r.get("message") or "")


# dbt reads these from the environment before its flags; in the sandbox they would point it at the
# user's own project, profile, artifacts or logs (DBT_TARGET_PATH: it would overwrite the manifest).
_DBT_PLACES = ("DBT_TARGET_PATH", "DBT_LOG_PATH", "DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_PACKAGES_INSTALL_PATH")


def _sandbox_dbt(project_dir: Path, *args: str):
    """`dbt <args>` in the sandbox, with none of the environment variables that name another place."""
    from ..runtime.dbt import run_dbt

    return run_dbt(project_dir, *args, unset=_DBT_PLACES)


class DbtSteps:
    """The next build of a dbt project; `run(path, *args)` runs dbt (default: the CLI; on Spark the
    sandbox's Spark child, which runs dbt on the Spark it holds)."""

    def __init__(self, run=None, private: bool = False):
        self._dbt = run or _sandbox_dbt
        self._private = private  # the spec has pii fields or redactions: quoted values are not printed

    def _run(self, path: Path, *args: str):
        from ..runtime.dbt import run_dbt_step

        run = run_dbt_step(path, *args, run=self._dbt)
        if not run.ok and not run.checks_failed():
            lines = run.private_error_lines(12) if self._private else run.error_lines(12)
            raise ProjectError(f"the next build could not run (`dbt {' '.join(args)}` in a copy of the project with the new "
                               "spec): " + " | ".join(lines))
        return run

    def generate(self, spec_dir: Path, path: Path, project) -> None:
        """Write the new spec into the sandbox's project, as `assay generate dbt` would."""
        from ..api import generate_dbt_project

        _refused(generate_dbt_project(spec_dir, path, project=project).report)
        if not (path / "dbt_packages").is_dir():
            self._run(path, "deps")

    def build(self, path: Path) -> Outcome:
        """`dbt build` of the new spec."""
        run = self._run(path, "build")
        return Outcome(run.ok, run.summary(), tuple(run.results))

    def rebuild(self, path: Path) -> Outcome:
        """The build after the replays."""
        return self.build(path)


class SqlmeshSteps:
    """The next plan and run of a SQLMesh project (see the module docstring)."""

    def __init__(self, execution_time: Optional[dt.datetime], dialect: str, private: bool = False):
        self.plan_time = execution_time or dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
        self.dialect = dialect
        self._private = private  # the spec has pii fields or redactions: quoted values are not printed
        self._ticks = 0

    def generate(self, spec_dir: Path, path: Path, project) -> None:
        """Write the new spec into the sandbox's project, as `assay generate sqlmesh` would."""
        from ..api_sqlmesh import generate_sqlmesh_project

        _refused(generate_sqlmesh_project(spec_dir, path, dialect=self.dialect).report)

    def _tick(self, path: Path) -> dt.datetime:
        from croniter import croniter

        from ..runtime.sqlmesh_gateway import _load_config

        cron = getattr(getattr(_load_config(path, path), "model_defaults", None), "cron", None) or "@daily"
        at = self.plan_time
        for _ in range(self._ticks + 1):
            at = croniter(cron, at).get_next(dt.datetime)
        self._ticks += 1
        return at

    def _context(self, path: Path, work):
        from sqlmesh import Context
        from sqlmesh.core.console import NoopConsole, get_console, set_console

        class Silent(NoopConsole):
            """SQLMesh's console silenced, but for the models that failed, which the plan names."""

            def log_failed_models(inner, errors) -> None:
                self._failed.extend(errors)

        before = get_console()
        self._failed: list = []
        set_console(Silent())
        ctx = None
        try:
            ctx = Context(paths=str(path))
            return work(ctx)
        finally:
            if ctx is not None:
                ctx.close()  # DuckDB: the readers open the file next, and one process holds it once
            set_console(before)

    def _could_not_run(self, exc: BaseException) -> None:
        """Stop `plan --data`: the next plan failed otherwise than on an audit, so it predicts nothing."""
        # the first line that says something: SQLMesh's destructive-change error opens with a blank one
        first = next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise ProjectError(f"the next plan could not run (`sqlmesh plan` in a copy of the project with the "
                           f"new spec): {engine_message(first) if self._private else first}") from None

    def build(self, path: Path) -> Outcome:
        """`sqlmesh plan --auto-apply`, then `sqlmesh run` at the next tick."""
        def work(ctx):
            try:
                ctx.plan(auto_apply=True, no_prompts=True, execution_time=self.plan_time)
            except Exception as exc:  # a failing blocking audit fails the whole plan, nothing applied
                if "Plan application failed" not in str(exc):
                    self._could_not_run(exc)
                stops = _audit_stops(self._failed)
                errored = [e for e in self._failed if _audit_errors(e) is None]
                if errored:  # a model's SQL failed, not an audit: no prediction to give
                    self._could_not_run(errored[0].__cause__ or errored[0])
                said = "; ".join(f"{a}{' ' + r if r else ''} on {m}: {n} {'row' if n == 1 else 'rows'}" for m, a, r, n in stops)
                return Outcome(False, "sqlmesh plan: a blocking audit failed" + (f" ({said})" if said else "")
                               + "; nothing was applied", otherwise=False, stops=stops)
            tick = self._tick(path)
            # `end`: SQLMesh's run stops at the wall clock otherwise, so a tick after today
            # (a plan for tomorrow's build) would have nothing to run
            status = ctx.run(execution_time=tick, end=tick)
            if _nothing_to_do(status):  # the plan applied the change; no interval was due yet
                return Outcome(True, f"sqlmesh plan: ok; run at {tick:%Y-%m-%d %H:%M}: nothing was due", otherwise=True)
            ok = bool(getattr(status, "is_success", status))
            return Outcome(ok, "sqlmesh plan and run: ok" if ok else "sqlmesh run: an audit failed", otherwise=True if ok else None)
        return self._context(path, work)

    def rebuild(self, path: Path) -> Outcome:
        """`sqlmesh run` at the tick after (it judges the replayed rows)."""
        def work(ctx):
            tick = self._tick(path)
            status = ctx.run(execution_time=tick, end=tick)
            if _nothing_to_do(status):
                # No model ran, so nothing judged the replayed rows: saying what they do would be a guess.
                raise ProjectError(
                    f"the run after the replays had nothing to do at {tick:%Y-%m-%d %H:%M} (no interval of the "
                    "models was due: the project has already run past it); give `--execution-time` after the "
                    "last interval the project has run")
            ok = bool(getattr(status, "is_success", status))
            return Outcome(ok, "sqlmesh run: ok" if ok else "sqlmesh run: an audit failed")
        return self._context(path, work)


def _audit_stops(errors: list) -> tuple:
    """(model, audit, rule or None, rows) of each audit failure among the errors SQLMesh's console
    was told of: the audit's own name and count (never a value of a row), the rule a `fail` rule's
    audit names as its `rule_name` argument."""
    found = []
    for err in errors:
        for cause in _audit_errors(err) or ():
            rule = (cause.audit_args or {}).get("rule_name")
            rule = getattr(rule, "name", None) or (str(rule).strip("'") if rule is not None else None)
            found.append((str(cause.model_name or "").replace('"', ""), cause.audit_name, rule, int(cause.count)))
    return tuple(sorted(found))


def _audit_errors(err: BaseException) -> Optional[list]:
    """The AuditErrors that failed a node SQLMesh reports (one, or several gathered in a
    NodeAuditsErrors), or None when the node failed otherwise (its SQL did not run)."""
    from sqlmesh.utils.errors import AuditError, NodeAuditsErrors

    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, AuditError):
            return [err]
        if isinstance(err, NodeAuditsErrors):
            return list(err.errors)
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return None


def _nothing_to_do(status) -> bool:
    """SQLMesh's `NOTHING_TO_DO`: no interval was ready to run, which is no failure (its
    `is_success` is false all the same)."""
    return getattr(status, "value", None) == "nothing_to_do"


def _refused(report) -> None:
    if report.refused:
        raise ProjectError("`assay generate` would refuse to write the new spec into the project ("
                           + ", ".join(list(report.links) + list(report.conflicts) + list(report.modified))
                           + "); resolve that first, as `assay generate` says.")
