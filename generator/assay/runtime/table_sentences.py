"""How `assay table list|get` and the report say a table's state (runtime/table_states.py decides
it): one line per table, one per event."""

from __future__ import annotations

from typing import Any, Optional

from .check_results import NODE_ERRORED, PROD, log_of
from .table_states import PLAN_FAILED, UPSTREAM_FAILED


def event_line(ev: dict[str, Any], environment: Optional[str] = None) -> str:
    """One event as `table get` prints it; a SQLMesh run of another environment than the one read
    (`environment`, None: prod) says which."""
    check = f" check {ev['check']}" if ev["check"] else ""
    why = f": {ev['why']}" if ev["why"] else ""
    env = ev.get("environment")
    where = f" (environment {env})" if env and env != (environment or PROD) else ""
    return f"  {ev['at']}  {ev['event']}  run {ev['run']}{where}{check}{why}"


def _upstream_because(t: dict[str, Any]) -> str:
    """Why a build skipped a table for an upstream entity (`upstream`, `check`, `check_table`), or
    for a checked bronze relation it extracts from (`schema.table`: an entity's name has no dot),
    whose checks record no set-back of their own (assay did not write it)."""
    if "." in t["upstream"]:
        return (f"because a blocking check of {t['upstream']}, which it reads, did not pass in that run "
                f"(assay checks {t['run']} names it)")
    kept = t.get("kept") and t.get("check_table") == t["upstream"]
    return f"because its upstream entity {t['upstream']} " + (
        f"failed in that run ({log_of(t['run'])} says why)" if not t.get("check")
        else f"was published but kept: its check {t['check']} failed, and a kept table's readers wait until its "
             "checks pass" if kept
        else f"did not pass check {t['check']}" if t.get("check_table") == t["upstream"]
        else f"was not written ({t['check_table']} did not pass check {t['check']})")


def line(t: dict[str, Any]) -> str:
    if t.get("unchanged_in"):
        # the environment read has no view of it: it reads prod's table, whose state this is
        return line({**t, "unchanged_in": None}) + f" (prod's table: unchanged in environment {t['unchanged_in']})"
    if not t.get("built_by_project", True):
        return f"{t['table']}: {t['state'].replace('_', ' ')} ({t['why']})"
    if t["state"] == "kept":
        later = t.get("latest_set_back")
        also = "" if not later else (f"; the latest build (run {later['run']}) was set back" +
                                     (f": check {later['check']} did not pass" if later.get("check") else ""))
        return f"{t['table']}: kept since run {t['run']}: check {t['check']} failed{also}"
    if t.get("why") == UPSTREAM_FAILED and t["state"] in ("set_back", "not_published"):
        because = _upstream_because(t)
        if t["state"] == "set_back":
            return (f"{t['table']}: set back by the latest build (run {t['run']}): it was not written {because}; "
                    "the previous version is still published")
        return f"{t['table']}: not published: run {t['run']} did not write it {because}"
    if t.get("why") == NODE_ERRORED and t["state"] in ("set_back", "not_published"):
        because = f"its model {t['node']} errored ({log_of(t['run'])} says why)"
        if t["state"] == "set_back":
            return (f"{t['table']}: set back by the latest build (run {t['run']}): it was not written: {because}; "
                    "the previous version is still published")
        return f"{t['table']}: not published: run {t['run']} did not write it: {because}"
    if t["state"] == "set_back":
        return (f"{t['table']}: set back by the latest build (run {t['run']}): check {t['check']} did not pass; "
                "the previous version is still published")
    if t["state"] == "published_failing" and t.get("skipped_in"):
        because = _upstream_because(t["skipped_in"])
        return (f"{t['table']}: published although the build of run {t['run']} did not pass check {t['check']}: SQLMesh "
                f"evaluated it in place, so readers see the rows that failed; the latest build (run "
                f"{t['skipped_in']['run']}) did not write it {because}")
    if t["state"] == "published_failing":
        return (f"{t['table']}: published although the latest build (run {t['run']}) did not pass check {t['check']}: "
                "SQLMesh evaluated it in place, so readers see the rows that failed")
    if t["state"] == "not_published":
        if t["why"] == PLAN_FAILED:
            plan = "plan" if str(t["run"]).startswith("SQLMESH_PLAN: ") else "run"
            failed = f"failed on {t['failed_table']} (check {t['check']} did not pass)" if t.get("check") \
                else f"failed on {t['failed_table']}"
            if t.get("built_in") == t["run"]:
                return (f"{t['table']}: not published: the {plan} that built it (run {t['run']}) {failed}, "
                        f"and SQLMesh publishes no view of a failed {plan}")
            built = f"; it was last built by run {t['built_in']}" if t.get("built_in") else ""  # an earlier failed plan
            return (f"{t['table']}: not published: {plan} {t['run']} {failed}, "
                    f"and SQLMesh publishes no view of a failed {plan}{built}")
        if t["run"] is None:
            return f"{t['table']}: not published (never built)"
        return f"{t['table']}: not published: run {t['run']} set it back, check {t['check']} did not pass"
    return f"{t['table']}: published"
