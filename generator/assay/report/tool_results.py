"""The build tool's own test and audit outcomes, for the report (issue 19; decision 0990).

dbt writes what its last invocation did to `target/run_results.json` (each test's status, failures
and message) and `dbt source freshness` to `target/sources.json`; the manifest beside them says
which model or source each test belongs to. These files are read as dbt wrote them; nothing is
re-run. SQLMesh keeps no per-audit outcome in its state (only snapshots, intervals and
environments): its audits' outcomes exist in the console output of the plan or run that ran them,
so for a SQLMesh project the report says so and shows assay's recorded check results instead.

Nothing here is a value of the data: names, statuses, counts and dbt's messages about counts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Optional

from ..ir.model import Project

NOT_RECORDED_BY_SQLMESH = (
    "SQLMesh keeps no per-audit outcome that can be read without running the audits again: its state "
    "holds snapshots, intervals and environments, and an audit's result is printed by the plan or run "
    "that ran it. The results below are the ones assay's checks recorded in the warehouse.")
# Nodes that did what they should are not listed one by one: a model that built is no news.
QUIET = {"success", "pass"}
STATUS_ORDER = ("error", "fail", "runtime error", "warn", "skipped", "pass", "success")  # worst first
# dbt's own message for a test's count; any other message (a database error) may quote a value of
# the data, pii included, so it is not copied onto a page meant to be shared (decision 0990).
COUNT_MESSAGE = re.compile(r"(Got \d+ results?, configured to (warn|fail|error) if [^\n]{1,40}|OK|PASS|SUCCESS)")
MESSAGE_NOT_SHOWN = "dbt's message is not shown here (it may quote the data); read it in run_results.json"


# assay's own materialization stops a model whose blocking check failed; its check id is no data
CHECK_FAILED = re.compile(r"\bCHECK_FAILED: ([A-Za-z0-9_]+):")


def _message(text: object) -> Optional[str]:
    """dbt's message as the report may show it (see COUNT_MESSAGE)."""
    if text is None or text == "":
        return None
    if COUNT_MESSAGE.fullmatch(str(text)):
        return str(text)
    check = CHECK_FAILED.search(str(text))
    if check:
        return f"assay's check {check.group(1)} did not pass (its result is among the table checks)"
    return MESSAGE_NOT_SHOWN


def _read(path: Path) -> Optional[dict]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _entity_of(node_id: Optional[str], project: Project) -> Optional[str]:
    """The entity a dbt node belongs to: its model or snapshot (`order`, `customer__current`) or the
    bronze source one of its mappings reads."""
    if not node_id:
        return None
    parts = node_id.split(".")
    name = parts[-1]
    names = {e.name for e in project.entities}
    if parts[0] == "source":
        return next((e.name for e in project.entities for m in e.mappings if m.source == name), None)
    if parts[0] in ("model", "snapshot"):
        base = name.split("__")[0]
        return base if base in names else None
    return None


def _node_name(node_id: str, manifest: dict) -> str:
    node = (manifest.get("nodes") or {}).get(node_id) or (manifest.get("sources") or {}).get(node_id) or {}
    return node.get("name") or node_id.split(".")[-1]


def dbt_results(project: Project, project_dir: Path, profiles_dir: Optional[Path] = None,
                target: Optional[str] = None) -> dict[str, Any]:
    """What dbt's last invocation in `project_dir` recorded: {"tool": "dbt", "invocation": {...} or
    None, "results": [{name, kind, status, failures, message, entity, attached}], "freshness":
    [...], "note": ...}. Tests are listed whatever their status; models, snapshots and hooks only
    when they did not succeed. An invocation against another profile target than the one read
    (`target`, default the profile's own) is not shown: its tests judged another warehouse."""
    from ..runtime.built_relations import manifest_path
    from ..runtime.dbt import invocation_target

    artifacts = manifest_path(project_dir).parent
    manifest = _read(artifacts / "manifest.json") or {}
    runs = _read(artifacts / "run_results.json")
    out: dict[str, Any] = {"tool": "dbt", "invocation": None, "results": [], "freshness": [], "note": None}
    other = invocation_target(runs, project_dir, profiles_dir, target) if runs is not None else None
    if runs is None:
        out["note"] = (f"{artifacts.name}/run_results.json is not there: dbt writes it on every build, run or test; "
                       "run `dbt build` to see dbt's own test outcomes here.")
    elif other is not None:
        from ..runtime.warehouse import profile_target

        read = profile_target(project_dir, profiles_dir, target).target  # readable: invocation_target read it
        out["note"] = (f"{artifacts.name}/run_results.json is dbt's last invocation against target '{other}', not "
                       f"'{read}', which this report reads: its tests judged another warehouse, so they are not "
                       f"shown; run `dbt build --target {read}` to see this target's.")
    else:
        meta = runs.get("metadata") or {}
        out["invocation"] = {"command": (runs.get("args") or {}).get("which"), "invocation_id": meta.get("invocation_id"),
                             "generated_at": meta.get("generated_at"), "dbt_version": meta.get("dbt_version")}
        for r in runs.get("results") or []:
            uid = str(r.get("unique_id") or "")
            kind = uid.split(".")[0]
            status = str(r.get("status") or "")
            if kind != "test" and status in QUIET:
                continue
            node = (manifest.get("nodes") or {}).get(uid) or {}
            attached = (node.get("attached_node") or next(iter((node.get("depends_on") or {}).get("nodes") or []), None)) \
                if kind == "test" else None
            out["results"].append({
                "name": node.get("name") or (uid.split(".")[2] if uid.count(".") >= 2 else uid),
                "kind": kind, "status": status, "failures": r.get("failures"), "message": _message(r.get("message")),
                "entity": _entity_of(attached, project) if kind == "test" else _entity_of(uid, project),
                "attached": _node_name(attached, manifest) if attached else None})
        out["results"].sort(key=lambda t: (STATUS_ORDER.index(t["status"]) if t["status"] in STATUS_ORDER else 0,
                                           t["kind"] != "test", t["entity"] or "~", t["name"]))
    fresh = _read(artifacts / "sources.json")
    # sources.json names no target; when run_results.json is of the same invocation it says which
    same = fresh is not None and runs is not None and \
        (fresh.get("metadata") or {}).get("invocation_id") == (runs.get("metadata") or {}).get("invocation_id")
    if fresh is not None and not (same and other is not None):
        for r in fresh.get("results") or []:
            uid = str(r.get("unique_id") or "")
            out["freshness"].append({"source": uid.split(".")[-1], "status": r.get("status"),
                                     "max_loaded_at": r.get("max_loaded_at"), "snapshotted_at": r.get("snapshotted_at"),
                                     "entity": _entity_of(uid, project)})
        out["freshness"].sort(key=lambda f: f["source"])
    return out


def tool_results(project: Project, project_dir: Path, kind: str, profiles_dir: Optional[Path] = None,
                 target: Optional[str] = None) -> dict[str, Any]:
    """The build tool's own outcomes for the report: dbt's files, or SQLMesh's note (see the module
    docstring)."""
    if kind == "sqlmesh":
        return {"tool": "sqlmesh", "invocation": None, "results": [], "freshness": [], "note": NOT_RECORDED_BY_SQLMESH}
    return dbt_results(project, project_dir, profiles_dir, target)
