"""The opening every mapping of a threshold takes (``max_increase``, ``max_volume_change``,
``anomaly``): it must be a mapping, and every key it states must be one of its own. Both are
reported as ``THRESHOLD_INVALID`` with the line of the mapping or of the key, and validation
then goes on with the mapping's own values."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Optional

from . import Problem
from .quoted import shown

THRESHOLD_INVALID = "THRESHOLD_INVALID"


class LimitProblems:
    """The problems of one threshold mapping, each placed at the line of the key it is about."""

    def __init__(self, line_of: Callable[[Optional[str]], int]):
        self.line_of = line_of
        self.problems: list[Problem] = []

    def add(self, message: str, at: Optional[str] = None) -> None:
        """One problem, at the line of key ``at`` (None: the mapping's own line)."""
        self.problems.append(Problem(THRESHOLD_INVALID, message, self.line_of(at)))

    def opened(self, raw: Any, *, label: str, key: str, keys: tuple, how: str,
               hint: Callable[[str], str] = lambda k: "") -> Optional[Mapping]:
        """``raw`` when it is a mapping (each unknown key reported), else None with the sentence
        saying how to write it (``how``: e.g. 'as a mapping, e.g. anomaly: {on_breach: warn}')."""
        if not isinstance(raw, Mapping):
            self.add(f"{label} states {key} {shown(raw)}; write it {how}")
            return None
        for k in raw:
            if k not in keys:
                self.add(f"{label} states {key}.{k}, which is not a key of {key}{hint(k)}; the accepted keys are "
                         f"{', '.join(keys)}", k)
        return raw
