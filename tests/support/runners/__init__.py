"""One interface to a target (dbt, SQLMesh), so one suite runs on every target and engine.

A suite that takes the `runner` fixture (tests/integration/conftest.py) and the `engine`
fixture runs once per (target, engine); adding a target is adding a `Runner` to `RUNNERS`,
adding an engine is adding an entry to tests/support/engines.ENGINES (a target that cannot run
on an engine says why in `Runner.unsupported`, and the suites skip that pair with the reason).

What a suite may ask of a target, and nothing else:
- `project(engine, root, spec, name)`: generate the spec into a fresh project on that engine;
  the project has `query(sql)` and `load_bronze(relations)`.
- `build(project)`: one `dbt build` / `sqlmesh plan`, as a `Build` (ok or not, the run id the
  mart records, which checks warned, which stopped it and on which rows, what was skipped).
- `respec(project, spec)`: regenerate from another spec and build as a user would.
- `audit_source(project, relation)`: the rows the ingestion audit of one bronze relation
  finds now, without building.
- `warned_rows(project, build, check)`: the rows behind each warning of a non-blocking check.
- `close(project)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional


@dataclass(frozen=True)
class Stopped:
    """A blocking check that failed: the check (its macro: `assay_ingestion_metadata`, ...), the
    rows its query returns, sorted, and where the target attaches it."""

    check: str
    rows: tuple
    where: str = ""  # what the check is attached to, as the target names it (a source, a model)


@dataclass
class Build:
    ok: bool
    run_id: str = ""  # the run_id the mart records for this build ("" when it did not run)
    log: str = ""
    warned: tuple = ()  # (check, rows failed) of every non-blocking check that found rows, sorted
    stopped: tuple = ()  # Stopped of every blocking check that failed, sorted
    # Names of the models and checks the build skipped after a failure; None when the target
    # does not report them (SQLMesh's plan raises one error for the whole plan).
    skipped: Optional[frozenset] = None
    run_date: Optional[str] = None  # the mart's run_date when the target fixes the clock (SQLMesh)
    executed_at: Optional[datetime] = None  # the build's injected execution time (SQLMesh)
    details: dict = field(default_factory=dict)  # target-specific extras (a SQLMesh plan, ...)


class Runner:
    """A target behind the interface the shared suites use; see the module docstring."""

    target: str = ""
    valid_to: str = ""  # the column that closes a type-2 version
    valid_from: str = ""

    def unsupported(self, engine) -> Optional[str]:
        """Why this target cannot run on `engine`, or None when it can."""
        return None

    def require(self, engine) -> None:
        """Skip the calling test or fixture, with the reason, when this target cannot run on `engine`."""
        reason = self.unsupported(engine)
        if reason:
            import pytest

            pytest.skip(f"{self.target} on {engine.id}: {reason}")

    def project(self, engine, root, spec, name: str):
        raise NotImplementedError

    def build(self, project, *, full_refresh: bool = False, select: Optional[str] = None) -> Build:
        raise NotImplementedError

    def start_clock(self, project, start: datetime) -> None:
        """Run the project's builds from `start` on, when the target injects a clock."""

    def respec(self, project, spec, observe=None) -> Build:
        """Regenerate from `spec` and build; `observe(project)`, where the target applies a
        change in two steps, runs between them (its result in `details["observed"]`)."""
        raise NotImplementedError

    def audit_source(self, project, relation: str) -> list:
        raise NotImplementedError

    def warned_rows(self, project, build: Build, check: str) -> list:
        """The rows each non-blocking `check` that warned in `build` returns now, one sorted tuple per check."""
        raise NotImplementedError

    def close(self, project) -> None:
        pass

    def __repr__(self) -> str:
        return self.target


def sorted_rows(rows) -> tuple:
    """Rows as a tuple of tuples in one order (repr: NULLs and mixed types sort too)."""
    return tuple(sorted((tuple(r) for r in rows), key=repr))


def _registry() -> dict:
    from .dbt import DbtRunner
    from .sqlmesh import SQLMeshRunner

    return {r.target: r for r in (DbtRunner(), SQLMeshRunner())}


RUNNERS: dict = _registry()
