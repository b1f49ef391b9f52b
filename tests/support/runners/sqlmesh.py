"""The SQLMesh target behind the shared suites' interface: `sqlmesh plan --auto-apply` in-process.

Each build is one daily interval after the previous one (SQLMesh evaluates a model once per
interval of its cron). `Context.plan` raises one `PlanError` for the whole plan; which audit
stopped it, and on which rows, is read from the scheduler's log (support.sqlmeshfailures), and
the non-blocking audits that found rows from SQLMesh's warnings.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from typing import Optional

from . import Build, Runner, Stopped, sorted_rows
from ..sqlmeshfailures import AuditFailure, Warnings, collect

# "'assay_coverage' audit error: 1 row failed. Audit query:\n<SQL>": a non-blocking audit that
# found rows, and the query it ran
_WARNED = re.compile(r"'(\w+)' audit error: (\d+) rows? failed(?:\. Audit query:\s*(.*))?", re.S)


def pin_clock(project, start: datetime) -> None:
    """Start the project's clock at `start`, and its models the day before (SQLMesh's default
    start is the day before the wall clock's today), so nothing depends on today's date."""
    import yaml

    path = project.path / "config.yaml"
    config = yaml.safe_load(path.read_text())
    config.setdefault("model_defaults", {})["start"] = (start - timedelta(days=1)).strftime("%Y-%m-%d")
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    project.clock = start


class SQLMeshRunner(Runner):
    target = "sqlmesh"
    valid_to = "valid_to"
    valid_from = "valid_from"

    def unsupported(self, engine) -> Optional[str]:
        if engine.kind not in ("duckdb", "postgres"):
            return f"the SQLMesh target has no gateway for {engine.kind} (assay.api_sqlmesh writes DuckDB and PostgreSQL configs)"
        return None

    def project(self, engine, root, spec, name: str):
        return engine.sqlmesh_project(root, spec, f"{name}_sqlmesh")

    def start_clock(self, project, start: datetime) -> None:
        pin_clock(project, start)

    def build(self, project, *, full_refresh: bool = False, select: Optional[str] = None, advance: bool = True) -> Build:
        """One `sqlmesh plan` (the whole project: `select` and `full_refresh` are dbt's notions;
        a plan rebuilds what changed and keeps history tables)."""
        return self._apply(project, lambda: project.plan(advance=advance))

    def _apply(self, project, step) -> Build:
        handler = Warnings()
        logger = logging.getLogger("sqlmesh")
        logger.addHandler(handler)
        try:
            with collect() as found:
                try:
                    plan = step()
                except Exception as exc:  # a failing blocking audit fails the whole plan
                    if "Plan application failed" not in str(exc):
                        raise
                    plan = None
        finally:
            logger.removeHandler(handler)
        found_warnings = [m for m in (_WARNED.search(text) for text in handler.messages) if m]
        warned = tuple(sorted((m.group(1), int(m.group(2))) for m in found_warnings))
        warned_sql = {}
        for m in found_warnings:
            warned_sql.setdefault(m.group(1), []).append((m.group(3) or "").strip())
        if plan is None:
            stopped = tuple(sorted(
                (Stopped(f.audit, sorted_rows(project.query(f.sql)), f.model_name) if isinstance(f, AuditFailure)
                 else Stopped(type(f).__name__, (str(f)[:500],)) for f in found), key=repr))
            return Build(False, log="\n".join(handler.messages)[-6000:], warned=warned, stopped=stopped)
        return Build(
            ok=True,
            run_id=f"SQLMESH_PLAN: {plan.plan_id}",
            log="\n".join(handler.messages)[-6000:],
            warned=warned,
            run_date=plan.execution_time.date().isoformat(),
            executed_at=project.clock.replace(tzinfo=None),
            details={"plan": plan, "warned_sql": warned_sql},
        )

    def warned_rows(self, project, build: Build, check: str) -> list:
        """The rows of every query of `check` that warned in `build` (SQLMesh logs the query)."""
        return [sorted_rows(project.query(sql)) for sql in build.details["warned_sql"].get(check, ())]

    def respec(self, project, spec, observe=None, next_interval: bool = False) -> Build:
        """Regenerate, `sqlmesh plan` on the same day (it rebuilds the changed models; the
        forward-only history tables wait for the next interval), `observe(project)` in between,
        then `sqlmesh run` at the next interval. A change that diverts rows the previous rules
        kept is stopped on the same day by the entity's conservation audit (decision 0939):
        `next_interval` plans it at the next interval instead, when the reject model takes the
        change in, and runs at the interval after. `details`: the plan (`same_day`, whichever
        day it was) and what `observe` returned."""
        from assay.api_sqlmesh import generate_sqlmesh_project

        result = generate_sqlmesh_project(spec, project.path, dialect=project.dialect)
        assert not result.report.conflicts, result.report.conflicts
        runs = {r for (r,) in project.query("select distinct run_id from gold.mart_data_quality")}
        project.context(fresh=True)
        same_day = self.build(project, advance=next_interval)
        if not same_day.ok:
            return same_day
        seen = observe(project) if observe else None
        ran = project.run()
        new = {r for (r,) in project.query("select distinct run_id from gold.mart_data_quality")} - runs
        new = {r for r in new if r.startswith("SQLMESH_RUN:")}
        return Build(ran, run_id=max(new) if new else "", details={"same_day": same_day, "observed": seen})

    def audit_source(self, project, relation: str) -> list:
        """The rows of the ingestion audit's query on `relation` (the audit on its staged model)."""
        rows = project.query(project.render(f"@assay_ingestion_metadata_violations({relation})"))
        return [Stopped("assay_ingestion_metadata", sorted_rows(rows), "")] if rows else []

    def close(self, project) -> None:
        project.close()
