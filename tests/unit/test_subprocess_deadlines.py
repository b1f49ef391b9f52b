"""Every subprocess the tests start has a deadline, so a hang fails one test and names what hung
(subprocess's TimeoutExpired carries the command) instead of holding the run until CI's limit.

Read from the source, not run: a call without `timeout=` is found before it ever hangs.
`Popen` is exempt where the code waits on it with a deadline itself (listed by file below).
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
CALLS = {"run", "check_output", "check_call", "call"}
# Files whose Popen is waited on with `communicate(timeout=...)` / a deadline loop of their own.
POPEN_WAITED = {"cli/test_issue19_small.py", "integration/test_operator_commands_dbt.py", "support/dbtserver.py",
                "unit/test_derby_lock.py"}


def _calls_without_deadline(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if not (isinstance(owner, ast.Name) and owner.id == "subprocess"):
            continue
        name = node.func.attr
        keywords = {k.arg for k in node.keywords}
        if name in CALLS and "timeout" not in keywords:
            found.append(f"{path.relative_to(TESTS)}:{node.lineno} subprocess.{name} without timeout=")
        if name == "Popen" and str(path.relative_to(TESTS)) not in POPEN_WAITED:
            found.append(f"{path.relative_to(TESTS)}:{node.lineno} subprocess.Popen not waited on with a deadline")
    return found


def test_every_subprocess_of_the_tests_has_a_deadline():
    missing = [line for path in sorted(TESTS.rglob("*.py")) for line in _calls_without_deadline(path)]
    assert missing == [], "\n".join(missing)
