"""A key typed by an operator against the key a reject row records as JSON (`assay.reject_keys`,
read by `assay explain` for a key bronze no longer delivers): equal as values of the key column's
type, and the SQL narrowing never drops a row of the key."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assay.reject_keys import key_values_hold, key_values_narrowing

TYPES = {"site": "string", "n": "int", "amount": "decimal(12,2)", "at": "timestamp", "day": "date"}


def _entity(*key: str):
    return SimpleNamespace(key=list(key), column=lambda name: SimpleNamespace(type=TYPES[name]))


@pytest.mark.parametrize("part, recorded, typed, same", [
    ("amount", '{"amount": 10.5}', "10.50", True),
    ("amount", '{"amount": 10.5}', "10.51", False),
    ("n", '{"n": 42}', "042", True),
    ("n", '{"n": 42}', "4", False),
    ("at", '{"at": "2026-12-05T01:00:00"}', "2026-12-05T01:00:00Z", True),
    ("at", '{"at": "2026-12-05T01:00:00.500000"}', "2026-12-05 02:00:00.5+01:00", True),
    ("at", '{"at": "2026-12-05T01:00:00"}', "2026-12-05T01:00:01", False),
    ("day", '{"day": "2026-02-28"}', "2026-02-28", True),
    ("site", '{"site": "A-1"}', "A-1", True),
    ("site", '{"site": "A-1"}', "a-1", False),
    ("site", '{"site": "A-1 "}', "A-1", False),  # text keeps its spaces
    ("site", '{"site": null}', "null", False),
])
def test_a_part_matches_as_a_value_of_its_type(part, recorded, typed, same):
    assert key_values_hold(_entity(part), recorded, {part: typed}) is same


def test_every_part_must_match_and_bad_json_matches_nothing():
    entity = _entity("site", "n")
    assert key_values_hold(entity, '{"site": "A", "n": 1}', {"site": "A", "n": "1"})
    assert not key_values_hold(entity, '{"site": "A", "n": 2}', {"site": "A", "n": "1"})
    assert not key_values_hold(entity, "not json", {"site": "A", "n": "1"})
    assert not key_values_hold(entity, None, {"site": "A", "n": "1"})


def test_the_narrowing_names_only_plain_text_and_escapes_like_wildcards():
    where, params = key_values_narrowing(_entity("site", "n", "amount"), {"site": "A_1", "n": "007", "amount": "1.50"})
    assert where == "cast(key_values as varchar) like ? escape '!' and cast(key_values as varchar) like ? escape '!'"
    assert params == ("%A!_1%", "%7%")
    # text a JSON writer may escape (a quote, a non-ASCII letter) is matched in Python only
    assert key_values_narrowing(_entity("site"), {"site": 'Zürich "1"'}) == ("1 = 1", ())
