"""The tree a ``pattern`` rule's regex is read into, and what every stage of reading and
checking it shares: the signal that stops a parse and the way a construct is quoted in a message.

:mod:`assay.spec.pattern_syntax` builds the tree; :mod:`assay.spec.pattern` runs the whole-pattern
rules over it. The names keep their leading underscore because nothing outside these modules
should build on the tree: :func:`assay.spec.pattern.check_pattern` is the API.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class _Quant:
    pos: int  # 0-based offset of the quantifier's first character
    text: str
    min: int
    max: Optional[int]  # None: unbounded
    counted: bool  # written with braces

    @property
    def unbounded(self) -> bool:
        return self.max is None


@dataclass
class _Atom:
    pos: int
    kind: str  # "literal", "dot", "class", "escape", "anchor", "group", "refused"
    text: str = ""
    branches: List["_Branch"] = field(default_factory=list)  # groups only


@dataclass
class _Piece:
    atom: _Atom
    quant: Optional[_Quant] = None


@dataclass
class _Branch:
    start: int
    end: int
    pieces: List[_Piece] = field(default_factory=list)


class _Stop(Exception):
    """A structural error after which nothing more can be read."""


def _show(text: str) -> str:
    """A construct as quoted in a message (control characters made visible)."""
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
