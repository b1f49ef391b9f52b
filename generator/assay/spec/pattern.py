"""The portable regex subset of a ``pattern`` rule (document 001, "pattern speaks a smaller
regex than you do").

A pattern runs on the engine, and the engines disagree: DuckDB and Trino run RE2, Postgres
runs POSIX ARE, Spark runs ``java.util.regex``. So a pattern may use only what the subset
names:

- literal characters, and a backslash before ASCII punctuation for a literal (``\\.``,
  ``\\\\``, ``\\-``); the control escapes ``\\n \\r \\t \\f``;
- ``.``;
- character classes ``[...]`` and ``[^...]`` holding literals, ranges ``a-z`` and the escapes
  above, ``\\d \\w \\s \\D \\W \\S`` included;
- ``\\d \\w \\s \\D \\W \\S``;
- the anchors ``^`` and ``$``;
- the quantifiers ``* + ? {n} {n,} {n,m}`` (counts 0 to 255, the most Postgres allows);
- alternation ``|`` and non-capturing groups ``(?:...)``.

Everything else is refused *by name*, including constructs nobody listed: the parser (in
:mod:`assay.spec.pattern_syntax`) accepts what it recognises and reports everything else, rather
than searching the text for a list of forbidden spellings. Two whole-pattern rules follow the parse:

- every branch of the top-level alternation starts with ``^`` and ends with ``$`` (a SQL regex
  predicate matches a substring, so an unanchored ``[0-9]{5}`` also accepts ``abc12345xyz``);
- no unbounded repetition inside another unbounded repetition (``(?:a+)*``), and no nest of
  counted repetitions whose counts multiply past 1000 (RE2 refuses those).

:func:`check_pattern` returns one sentence per refusal, each naming the construct and its
1-based character position in the pattern and saying what to write instead; an empty list
means the pattern is accepted. It never raises on any text.

A note on YAML: a plain scalar keeps its backslashes, so ``regex: ^[^\\\\]*$`` in a spec is the
pattern ``^[^\\\\]*$`` ("no backslash anywhere") exactly as written.
"""

from __future__ import annotations

from typing import Optional

from .pattern_syntax import MAX_GROUP_DEPTH, MAX_REPEAT, _Parser
from .pattern_tree import _Branch, _Piece, _Quant, _show, _Stop

__all__ = ["check_pattern", "MAX_REPEAT", "MAX_NESTED_REPEAT", "MAX_GROUP_DEPTH"]

#: The largest product of nested counted repetitions RE2 accepts.
MAX_NESTED_REPEAT = 1000


# --------------------------------------------------------------------------- whole-pattern rules


def _undecided(p: _Piece) -> bool:
    """A piece already refused for itself says nothing about anchoring either way."""
    return p.atom.kind == "refused" or (p.atom.kind == "anchor" and p.quant is not None)


def _starts_anchored(br: _Branch) -> bool:
    if not br.pieces:
        return False
    p = br.pieces[0]
    if p.quant is not None:
        return False
    if p.atom.kind == "anchor":
        return p.atom.text == "^"
    if p.atom.kind == "group" and p.atom.text == "(?:":
        return all(_starts_anchored(b) for b in p.atom.branches)
    return False


def _ends_anchored(br: _Branch) -> bool:
    if not br.pieces:
        return False
    p = br.pieces[-1]
    if p.quant is not None:
        return False
    if p.atom.kind == "anchor":
        return p.atom.text == "$"
    if p.atom.kind == "group" and p.atom.text == "(?:":
        return all(_ends_anchored(b) for b in p.atom.branches)
    return False


def _anchor_problems(text: str, branches: list[_Branch]) -> list[tuple[int, str]]:
    missing = []
    for idx, br in enumerate(branches):
        start_ok = _starts_anchored(br) or (bool(br.pieces) and _undecided(br.pieces[0]))
        end_ok = _ends_anchored(br) or (bool(br.pieces) and _undecided(br.pieces[-1]))
        if not (start_ok and end_ok):
            missing.append((idx, br, start_ok, end_ok))
    if not missing:
        return []
    fixed = "|".join(
        ("" if _starts_anchored(br) else "^") + text[br.start:br.end]
        + ("" if _ends_anchored(br) else "$")
        for br in branches
    )
    if any(_undecided(p) for br in branches for p in br.pieces[:1] + br.pieces[-1:]):
        fixed = "|".join("^" + text[br.start:br.end].lstrip("^").rstrip("$") + "$"
                         for br in branches)
    out = []
    for idx, br, start_ok, end_ok in missing:
        if not start_ok and not end_ok:
            lacks = "does not start with ^ or end with $"
        elif not start_ok:
            lacks = "does not start with ^"
        else:
            lacks = "does not end with $"
        if len(branches) == 1:
            where = "the pattern"
            example = ("so an unanchored pattern accepts any value that merely contains a match "
                       "([0-9]{5} accepts abc12345xyz, ^[0-9]{5}$ does not)")
        else:
            where = f"branch {idx + 1} of {len(branches)}"
            example = ("so with alternation each branch carries its own pair of anchors, as in "
                       "^a$|^b$")
        # The anchored form is offered only where nothing else of the pattern is refused: an
        # offer of another refused pattern would send the user round in a circle.
        offer = f"write {_show(fixed)} instead" if _portable_but_anchors(fixed) else "anchor it with ^ and $"
        out.append((
            br.start,
            f"an unanchored pattern at position {br.start + 1} is refused: {where} {lacks}, "
            f"and every SQL regex predicate matches a substring, {example}; {offer}.",
        ))
    return out


def _portable_but_anchors(fixed: str) -> bool:
    """Whether the anchored form of a pattern is accepted: nothing but its anchors was refused."""
    return not check_pattern(fixed)


def _first_unbounded(branches: list[_Branch]) -> Optional[_Quant]:
    for br in branches:
        for p in br.pieces:
            if p.quant is not None and p.quant.unbounded:
                return p.quant
            if p.atom.kind == "group":
                inner = _first_unbounded(p.atom.branches)
                if inner is not None:
                    return inner
    return None


def _repetition_problems(text: str, branches: list[_Branch], product: int,
                         out: list[tuple[int, str]]) -> None:
    for br in branches:
        for p in br.pieces:
            q = p.quant
            inner_product = product
            if q is not None and q.counted:
                count = q.max if q.max is not None else q.min
                inner_product = product * max(count, 1)
                if inner_product > MAX_NESTED_REPEAT and count <= MAX_REPEAT and (
                    product <= MAX_NESTED_REPEAT
                ):
                    out.append((
                        q.pos,
                        f"the nested counted repetition {q.text} at position {q.pos + 1} is "
                        f"refused: with the counts around it the pattern repeats {inner_product} "
                        f"times in all, and RE2 refuses more than {MAX_NESTED_REPEAT}; write "
                        "smaller counts, or + or * where the exact count does not matter.",
                    ))
            if p.atom.kind != "group":
                continue
            if q is not None and q.unbounded:
                inner = _first_unbounded(p.atom.branches)
                if inner is not None:
                    group_text = _show(text[p.atom.pos:q.pos])
                    out.append((
                        p.atom.pos,
                        f"the nested unbounded repetition {group_text}{q.text} at position "
                        f"{p.atom.pos + 1} is refused: the group repeats without bound and so "
                        f"does {inner.text} at position {inner.pos + 1} inside it, which a "
                        "backtracking engine can take exponential time over; write one "
                        "unbounded repetition (for example a* for (?:a+)*) or give one of them "
                        "a count such as {1,50}.",
                    ))
            _repetition_problems(text, p.atom.branches, inner_product, out)


# --------------------------------------------------------------------------- entry point


def check_pattern(regex: str, anchored: bool = True) -> list[str]:
    """Refusals of ``regex`` against the portable subset; ``[]`` when it is accepted.

    Each item is one sentence naming the construct and its 1-based position in the pattern
    and saying what to write instead. ``anchored=False`` (a regex call of an expression rule,
    which searches by its own choice) leaves out the rule that every branch is anchored.

    >>> check_pattern("^[0-9]{5}$")
    []
    >>> check_pattern("^(a)$")[0].startswith("a capturing group at position 2")
    True
    """
    if not isinstance(regex, str):
        return [
            f"a pattern of type {type(regex).__name__} at position 1 is refused: a pattern is "
            "text; write it as a YAML string, e.g. regex: ^[0-9]{5}$ ."
        ]
    if regex == "":
        return [
            "an empty pattern at position 1 is refused: it matches every value, so the rule "
            "would never fire; write an anchored pattern such as ^[0-9]{5}$ instead."
        ]
    parser = _Parser(regex)
    try:
        branches = parser.parse()
    except _Stop:
        return [msg for _, msg in sorted(parser.problems, key=lambda pm: pm[0])]
    problems = list(parser.problems)
    if anchored:
        problems.extend(_anchor_problems(regex, branches))
    _repetition_problems(regex, branches, 1, problems)
    problems.sort(key=lambda pm: pm[0])
    return [msg for _, msg in problems]

