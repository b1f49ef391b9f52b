"""Which audit stopped a SQLMesh plan or run, and on which rows.

`Context.plan` raises only `PlanError("Plan application failed.")`; the audit that failed is
the cause of each node error the scheduler logs (sqlmesh.core.scheduler, `logger.info(str(error),
exc_info=error)`). A test that expects a plan to fail catches those and asserts the audit's
name, its model and the rows its query returns, so a plan that fails for another reason (a
model that does not compile) does not pass it.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass


@dataclass
class AuditFailure:
    model: str  # e.g. '"silver"."dirty_key__staged"' as SQLMesh names it; see `model_name`
    audit: str
    count: int
    sql: str

    @property
    def model_name(self) -> str:
        return self.model.replace('"', "")


class _Collector(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.errors: list[BaseException] = []

    def emit(self, record):
        if record.exc_info and record.exc_info[1] is not None:
            self.errors.append(record.exc_info[1])


@contextlib.contextmanager
def collect():
    """Yields a list filled, on exit, with every AuditFailure and other node error logged."""
    from sqlmesh.utils.errors import AuditError, NodeAuditsErrors

    handler = _Collector()
    logger = logging.getLogger("sqlmesh.core.scheduler")
    old_level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    found: list = []
    try:
        yield found
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        for err in handler.errors:
            cause = err.__cause__ or err
            audits = cause.errors if isinstance(cause, NodeAuditsErrors) else [cause]
            for audit in audits:
                if isinstance(audit, AuditError):
                    found.append(AuditFailure(str(audit.model_name), audit.audit_name, audit.count, audit.sql()))
                else:
                    found.append(audit)


def plan_fails(project, **kwargs) -> list:
    """Run `project.plan(**kwargs)`, assert it fails, and return what made it fail."""
    import pytest

    with collect() as found:
        with pytest.raises(Exception, match="Plan application failed"):
            project.plan(**kwargs)
    return found


class Warnings(logging.Handler):
    """The messages SQLMesh logs at WARNING and above while it is installed."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def planned_with_warnings(project, **kwargs) -> tuple[str, str]:
    """Run `project.plan(**kwargs)`, which must apply; return (its run id, the warnings SQLMesh
    logged meanwhile: a non-blocking audit's `'<audit>' audit error: N rows failed`)."""
    warnings = Warnings()
    logging.getLogger("sqlmesh").addHandler(warnings)
    try:
        run = f"SQLMESH_PLAN: {project.plan(**kwargs).plan_id}"
    finally:
        logging.getLogger("sqlmesh").removeHandler(warnings)
    return run, " ".join(warnings.messages)
