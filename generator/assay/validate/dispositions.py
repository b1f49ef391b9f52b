"""The one sentence for every disposition mistake, shared by every rule kind."""

from __future__ import annotations

from typing import Optional

DISPOSITIONS = ("flag", "quarantine", "fail")


def disposition_problem(value: Optional[str], what: str, allowed: tuple[str, ...] = DISPOSITIONS) -> Optional[str]:
    """None when `value` is a valid on_fail, else the refusal sentence."""
    choices = ", ".join(f"`{a}`" for a in allowed)
    if value is None:
        return f"{what} states no `on_fail`; write `on_fail:` with one of {choices}. There is no default: it is the one setting nobody reads before shipping."
    if value == "drop":
        return (
            f"{what} says `on_fail: drop`, and assay never drops a row silently. Write `on_fail: quarantine` "
            "(the row goes to the reject table and can be replayed; add `quarantine: {retention: 90d}` to the entity "
            "if it has none) or `on_fail: flag` to keep it with a flag."
        )
    if value not in allowed:
        return f"{what} says `on_fail: {value}`; write one of {choices}."
    return None
