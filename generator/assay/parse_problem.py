"""sqlglot's complaint about text that does not parse, in the author's terms: no class names, no
terminal colours. One wording for expression rules and SQL check files alike."""

from __future__ import annotations

import re

import sqlglot

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse_problem(exc: Exception) -> str:
    """What is wrong, as a sentence part: "`>` is missing an operand", "invalid expression ... near
    `x`"; sqlglot's "Required keyword: 'expression' missing for <class '...GT'>" never reaches a user."""
    errors = getattr(exc, "errors", None) or []
    if not errors:
        if isinstance(exc, sqlglot.errors.TokenError):
            return "an unclosed quote or comment, or a character SQL does not allow"
        first_line = _ANSI.sub("", str(exc)).splitlines()[0] if str(exc) else ""
        return first_line or "it does not parse"
    first = errors[0]
    near = _ANSI.sub("", str(first.get("highlight") or "")).strip()
    description = _ANSI.sub("", str(first.get("description") or "")).split(" but got <Token")[0].strip()
    if description.startswith("Required keyword"):
        return f"`{near}` is missing an operand" if near else "an operand is missing"
    description = description or "it does not parse"
    description = description[:1].lower() + description[1:]
    return f"{description} near `{near}`" if near else description


def parse_position(exc: Exception) -> tuple[int | None, int | None]:
    """(line, column) sqlglot names for the first problem, or (None, None)."""
    errors = getattr(exc, "errors", None) or []
    return (errors[0].get("line"), errors[0].get("col")) if errors else (None, None)
