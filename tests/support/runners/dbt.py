"""The dbt target behind the shared suites' interface: `dbt build` in a generated project.

What a build did is read from target/run_results.json (support.dbtresults), never from the log.
"""

from __future__ import annotations

import json
from typing import Optional

from . import Build, Runner, Stopped
from .. import dbtresults


def _name(unique_id: str) -> str:
    """`model.assay_it.dirty_key__staged` -> `dirty_key__staged` (tests keep their full name)."""
    return unique_id.split(".", 2)[2]


def _check(unique_id: str) -> str:
    """The check a generated test runs: its name up to the first `__` (`assay_reconcile`)."""
    return _name(unique_id).split("__")[0]


def _attached(project) -> dict:
    """Test unique_id (without dbt's hash) -> the nodes it depends on, from target/manifest.json."""
    manifest = json.loads((project.path / "target" / "manifest.json").read_text())
    return {dbtresults._uid(uid): ",".join(n["depends_on"]["nodes"]) for uid, n in manifest["nodes"].items() if uid.startswith("test.")}


def _stopped(project, nodes: dict) -> tuple:
    out = []
    attached = _attached(project) if any(r["status"] == "fail" for r in nodes.values()) else {}
    for uid, r in nodes.items():
        if r["status"] == "fail":
            out.append(Stopped(_check(uid), tuple(dbtresults.failing_rows(project, uid)), attached.get(uid, "")))
        elif r["status"] == "error":
            out.append(Stopped(_name(uid), ()))
    return tuple(sorted(out, key=repr))


class DbtRunner(Runner):
    target = "dbt"
    valid_to = "dbt_valid_to"
    valid_from = "dbt_valid_from"

    def project(self, engine, root, spec, name: str):
        return engine.dbt_project(root, spec, f"{name}_dbt")

    def build(self, project, *, full_refresh: bool = False, select: Optional[str] = None) -> Build:
        args = ["build", *(["--full-refresh"] if full_refresh else []), *(["--select", f"+{select}"] if select else [])]
        proc = project.dbt(*args)
        log = proc.stdout[-6000:] + proc.stderr[-2000:]
        if not (project.path / "target" / "run_results.json").exists():
            return Build(False, log=log)
        nodes = dbtresults.nodes(project)
        return Build(
            ok=proc.returncode == 0,
            run_id=json.loads((project.path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"],
            log=log,
            warned=tuple(sorted((_check(uid), r["failures"]) for uid, r in nodes.items() if r["status"] == "warn")),
            stopped=_stopped(project, nodes),
            skipped=frozenset(_name(uid) for uid, r in nodes.items() if r["status"] == "skipped"),
            details={"nodes": nodes},
        )

    def warned_rows(self, project, build: Build, check: str) -> list:
        """The rows of every test of `check` that warned in `build`, by running its compiled query again."""
        return [tuple(sorted((tuple(r) for r in project.query(r["compiled_code"])), key=repr))
                for uid, r in sorted(build.details["nodes"].items()) if r["status"] == "warn" and _check(uid) == check]

    def respec(self, project, spec, observe=None) -> Build:
        from assay.api import generate_dbt_project

        result = generate_dbt_project(spec, project.path)
        assert not result.report.conflicts, result.report.conflicts
        return self.build(project)

    def audit_source(self, project, relation: str) -> list:
        """`dbt test --select source:<relation>`: the checks of that source that did not pass."""
        project.dbt("test", "--select", f"source:{relation}")
        nodes = dbtresults.nodes(project)
        others = [Stopped(_name(uid), (r["status"],)) for uid, r in nodes.items() if r["status"] not in ("pass", "success", "fail", "error")]
        return list(_stopped(project, nodes)) + others
