"""What the last dbt invocation of a project reported, read from target/run_results.json.

Tests that expect a run to fail use these to say *which* node failed and why (a non-zero exit
code alone also passes when a model does not compile)."""

from __future__ import annotations

import json
import re

CHECK_FAILED = re.compile(r"CHECK_FAILED: (.*)\. \S+ was not published(?:; its previous version is still published)?; the failing candidate is (\S+)\.")


def run_results(project) -> dict:
    return json.loads((project.path / "target" / "run_results.json").read_text())


_TEST_HASH = re.compile(r"\.[0-9a-f]{10}$")


def _uid(unique_id: str) -> str:
    """A test's unique_id without the hash dbt appends to long test names."""
    return _TEST_HASH.sub("", unique_id) if unique_id.startswith("test.") else unique_id


def nodes(project) -> dict[str, dict]:
    """unique_id (tests without dbt's hash suffix) -> that node's result (status, message,
    failures, compiled_code, ...)."""
    return {_uid(r["unique_id"]): r for r in run_results(project)["results"]}


def statuses(project) -> dict[str, str]:
    return {uid: r["status"] for uid, r in nodes(project).items()}


def not_ok(project) -> dict[str, str]:
    """unique_id -> status of every node that did not succeed or pass (skips included)."""
    return {uid: s for uid, s in statuses(project).items() if s not in ("success", "pass")}


def check_failed(project, model_uid: str) -> tuple[str, str]:
    """(the `CHECK_FAILED: ...` detail, the candidate relation) of a model refused by its checks."""
    result = nodes(project)[model_uid]
    assert result["status"] == "error", (model_uid, result["status"], result.get("message"))
    found = CHECK_FAILED.search(result.get("message") or "")
    assert found, f"{model_uid} failed without CHECK_FAILED: {result.get('message')}"
    return found.group(1), found.group(2)


def failing_rows(project, test_uid: str) -> list[tuple]:
    """The rows a failed dbt test returned, by running its compiled query again."""
    result = nodes(project)[test_uid]
    assert result["status"] == "fail", (test_uid, result["status"], result.get("message"))
    sql = result.get("compiled_code")
    assert sql, f"{test_uid}: run_results.json has no compiled_code"
    return sorted(project.query(sql), key=repr)
