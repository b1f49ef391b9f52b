"""The spec's durations (`6h`, `90d`, `2w`: retention, freshness, an incremental entity's lag):
one grammar, parsed once.

The spec models check the text against `PATTERN` (so a bad value is reported with its file and
line); the resolved IR holds a `Duration`, which is still the text the user wrote wherever it is
shown or written into a generated file, and knows its length. Every consumer (retention, the
report, the dbt and SQLMesh freshness thresholds, the incremental window) reads `hours` or
`timedelta` here instead of parsing the text again.
"""

from __future__ import annotations

import datetime as dt
import re

PATTERN = r"^[1-9][0-9]{0,4}[hdw]$"
#: An incremental entity's lag may be zero (`0h`), its documented default written out; a
#: retention or a freshness threshold of zero means nothing, so theirs may not.
ZERO_OR_MORE = r"^(0|[1-9][0-9]{0,4})[hdw]$"
UNIT_HOURS = {"h": 1, "d": 24, "w": 24 * 7}
_MATCH = re.compile(ZERO_OR_MORE[1:-1])  # fullmatch: `$` would also take a trailing newline


class Duration(str):
    """A duration of the spec grammar: its text (a `str`), with its `count`, `unit` and length."""

    __slots__ = ()

    def __new__(cls, text: str) -> "Duration":
        if not isinstance(text, str) or not _MATCH.fullmatch(text):
            raise ValueError(f"{text!r} is not a duration like 6h, 90d or 2w")
        return super().__new__(cls, text)

    @property
    def count(self) -> int:
        """The number the text starts with (`90` of `90d`)."""
        return int(self[:-1])

    @property
    def unit(self) -> str:
        """`h`, `d` or `w`."""
        return self[-1]

    @property
    def hours(self) -> int:
        return self.count * UNIT_HOURS[self.unit]

    @property
    def timedelta(self) -> dt.timedelta:
        return dt.timedelta(hours=self.hours)


def duration(text):
    """`Duration(text)`, or None for None (an optional duration of the spec)."""
    return None if text is None else Duration(text)
