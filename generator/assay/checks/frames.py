"""The failure sentences of declared checks written before anything is measured, with each measured
part left as a named slot: frames, for a renderer that is not Python (decision 0945).

The dbt package decides a declared check in Jinja when the build measures it, and its error names
the failed check with a sentence. For `value_range`, `key_uniqueness` and `continuity` that
sentence holds values (the offending value, the repeating key, the gap's ends), which Jinja cannot
render through assay.checks.detail. The generator therefore renders each such check's failure
sentences here, through the very functions `assay checks` uses, with slots where the measured
parts go, and writes them into the check's descriptor; the package only fills the slots. The
wording stays in detail.py, once.

A frame is a list of texts: the even positions (from 0) are the sentence's own text, the odd ones
name a slot: `first` (the offending value), `key_1`..`key_n` (the first repeating key's parts),
`repeats` and `rows` (counts), `from`, `to` (the gap's ends) and `gap` (its width).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from .detail import (
    continuity_gap_sentence,
    continuity_unmeasurable_detail,
    key_repeats_sentence,
    key_tuple,
    value_range_outside_sentence,
    value_range_unorderable_detail,
)

__all__ = ["FRAMED_KINDS", "failure_frames"]

#: The kinds whose failure sentences hold measured values; the others' are integers only and
#: the package writes them itself (held equal by tests/dbt_package/test_verdict_agreement.py).
FRAMED_KINDS = ("value_range", "key_uniqueness", "continuity")
_EDGE = "\x00"  # a slot's edges inside the rendered text: no column name or bound holds it


def _slot(name: str) -> str:
    return f"{_EDGE}{name}{_EDGE}"


def failure_frames(kind: str, columns: Sequence[str], bounds: Mapping[str, Any], *, domain: Optional[str] = None,
                   orderable: bool = True) -> dict[str, list[str]]:
    """{case: frame} of one declared check's failure sentences, as a check's descriptor states it
    (its kind, columns, bounds, `domain` of a continuity check, `orderable` of a value range):
    `above` and `below` (a value outside the range) or `unorderable`; `repeats`; `gap` or
    `unmeasurable`. Empty for a kind that is not framed."""
    column = columns[0] if columns else ""
    if kind == "value_range":
        low, high = str(bounds["min_value"]), str(bounds["max_value"])
        if not orderable:
            found = {"unorderable": value_range_unorderable_detail(column, low, high).detail}
        else:
            found = {side: value_range_outside_sentence(column, _slot("first"), side, low, high)
                     for side in ("above", "below")}
    elif kind == "key_uniqueness":
        first = key_tuple([_slot(f"key_{i}") for i in range(1, len(columns) + 1)])
        found = {"repeats": key_repeats_sentence(columns, _slot("repeats"), _slot("rows"), first)}
    elif kind == "continuity":
        ceiling = int(bounds["max_gap_seconds"])
        if domain is None:
            found = {"unmeasurable": continuity_unmeasurable_detail(column, ceiling).detail}
        else:
            found = {"gap": continuity_gap_sentence(column, _slot("from"), _slot("to"), _slot("gap"), ceiling, domain)}
    else:
        return {}
    return {case: text.split(_EDGE) for case, text in sorted(found.items())}
