"""The `MODEL (...)` header of a SQLMesh model file, written in one stable layout."""

from __future__ import annotations

from typing import Optional

INDENT = "  "
# Properties in the order a reader looks for them; only the ones given are written.
ORDER = (
    "name",
    "kind",
    "dialect",
    "owner",
    "description",
    "tags",
    "grain",
    "grants",
    "depends_on",
    "columns",
    "column_descriptions",
    "audits",
)


def audit_call(name: str, **args: Optional[str]) -> str:
    """`name(arg := value, ...)` with values already spelled as SQL; `None` values are left out."""
    given = [f"{k} := {v}" for k, v in args.items() if v is not None]
    return f"{name}({', '.join(given)})" if given else name


def _nested(items: list[str]) -> str:
    inner = (",\n" + INDENT * 2).join(items)
    return f"(\n{INDENT * 2}{inner}\n{INDENT})"


def model_block(**props) -> str:
    """A MODEL block. `audits`, `columns` and `column_descriptions` take lists, the rest SQL text."""
    unknown = set(props) - set(ORDER)
    if unknown:  # pragma: no cover - a generator bug, not a user error
        raise ValueError(f"unknown MODEL properties: {sorted(unknown)}")
    lines = []
    for key in ORDER:
        value = props.get(key)
        if value is None or value == [] or value == "":
            continue
        if isinstance(value, list):
            value = _nested(value)
        lines.append(f"{INDENT}{key} {value}")
    return "MODEL (\n" + ",\n".join(lines) + "\n);"
