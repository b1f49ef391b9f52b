"""The spec's durations, parsed once (assay.duration): the grammar the spec models check, and the
lengths every consumer reads (retention, the report, freshness thresholds on both targets, the
incremental window)."""

from __future__ import annotations

import datetime as dt
import json

import pytest
import yaml

from assay.duration import PATTERN, Duration, duration


@pytest.mark.parametrize("text, hours", [("1h", 1), ("6h", 6), ("90d", 2160), ("2w", 336), ("99999h", 99999)])
def test_a_duration_is_its_text_and_knows_its_length(text, hours):
    d = Duration(text)
    assert d == text and str(d) == text and f"{d}" == text  # shown and written as the user wrote it
    assert d.hours == hours and d.timedelta == dt.timedelta(hours=hours)
    assert json.dumps({"retention": d}) == json.dumps({"retention": text})
    assert yaml.safe_dump({"retention": str(d)}) == f"retention: {text}\n"


@pytest.mark.parametrize("text", ["", "0d", "6", "h", "1.5h", "6m", "100000h", " 6h", "6h ", "6h\n", "6H", "-1d", None, 6])
def test_anything_else_is_refused(text):
    with pytest.raises(ValueError, match="is not a duration like 6h, 90d or 2w"):
        Duration(text)


def test_the_spec_grammar_is_the_same_pattern():
    from assay.spec import models

    assert models.DURATION_PATTERN == PATTERN
    assert duration(None) is None and duration("2w").hours == 336
