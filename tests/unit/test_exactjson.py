"""Rows kept as JSON text print every digit of their numbers (`assay check rows`)."""

from __future__ import annotations

from decimal import Decimal

from assay import exactjson

KEPT = ('{"v": 1234567890123456789012345678.1234567891, "w": -0.0000000001, "n": 3, '
        '"x": [12345678901234567.12345], "s": "a\\u0000b", "t": null}')


def test_numbers_round_trip_digit_for_digit():
    row = exactjson.loads(KEPT)
    assert row["v"] == Decimal("1234567890123456789012345678.1234567891") and row["n"] == 3
    assert exactjson.dumps(row) == KEPT


def test_a_string_that_looks_like_a_number_stays_a_string():
    row = {"s": "0", "d": Decimal("0.10")}
    assert exactjson.dumps(row, indent=1) == '{\n "s": "0",\n "d": 0.10\n}'
