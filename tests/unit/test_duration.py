"""The spec's durations, parsed once (assay.duration): the grammar the spec models check, and the
lengths every consumer reads (retention, the report, freshness thresholds on both targets, the
incremental window)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

from assay.duration import PATTERN, ZERO_OR_MORE, Duration, duration


@pytest.mark.parametrize("text, hours", [("1h", 1), ("6h", 6), ("90d", 2160), ("2w", 336), ("99999h", 99999)])
def test_a_duration_is_its_text_and_knows_its_length(text, hours):
    d = Duration(text)
    assert d == text and str(d) == text and f"{d}" == text  # shown and written as the user wrote it
    assert d.hours == hours and d.timedelta == dt.timedelta(hours=hours)
    assert json.dumps({"retention": d}) == json.dumps({"retention": text})
    assert yaml.safe_dump({"retention": str(d)}) == f"retention: {text}\n"


@pytest.mark.parametrize("text", ["", "00d", "06h", "6", "h", "1.5h", "6m", "100000h", " 6h", "6h ", "6h\n", "6H", "-1d", None, 6])
def test_anything_else_is_refused(text):
    with pytest.raises(ValueError, match="is not a duration like 6h, 90d or 2w"):
        Duration(text)


def test_the_spec_grammar_is_the_same_pattern():
    from assay.spec import models

    assert models.DURATION_PATTERN == PATTERN
    assert duration(None) is None and duration("2w").hours == 336


def test_a_lag_may_be_zero_and_nothing_else_may():
    """`lag: 0h` is the documented default written out (an outside tester, session 44, was told it
    was "not a duration"); a retention or freshness threshold of zero is refused with a sentence
    saying so, not that `0d` is no duration."""
    from assay.spec import models
    from assay.spec.grammar_errors import _pattern_message

    assert Duration("0h").hours == 0 and models.LAG_PATTERN == ZERO_OR_MORE
    assert _pattern_message("entities.t.quarantine.retention", "0d", PATTERN) == (
        "entities.t.quarantine.retention is `0d`: zero is no retention; write at least one hour, day or week such "
        "as `1h`, `1d`, `1w`, or leave it out.")
