"""The words `assay explain` gives a fired coercible rule of a field read by a JSON path
(decisions 1123, 1130): why the path found nothing to convert. The engine decided the coercion;
these only choose the words, and say nothing where the path could be followed."""

from __future__ import annotations

import pytest

from assay.explain import unreadable_path

BILLED = ("billed", "amount")  # $.billed.amount
CITY = ("payload", "loc", "city")  # $.payload.loc.city


@pytest.mark.parametrize("text, path, words", [
    ("{not json", BILLED, "is not JSON"),
    ('{"a": NaN}', BILLED, "is not JSON"),  # strict JSON: the engines differ here (decision 1123)
    ("382.16", BILLED, "is a number"),
    ('"382.16"', BILLED, "is a string"),
    ("true", BILLED, "is a boolean"),
    ('[{"amount": 1}]', BILLED, "is an array"),
    ('{"loc": "flat"}', CITY, "holds a string at $.payload.loc"),
    ('{"loc": [1]}', CITY, "holds an array at $.payload.loc"),
    ('{"loc": 5}', CITY, "holds a number at $.payload.loc"),
])
def test_a_path_that_could_not_be_read_is_told_why(text, path, words):
    assert unreadable_path(text, path) == words


@pytest.mark.parametrize("text, path", [
    ('{"amount": "12.50"}', BILLED),
    ('{"amount": "lots"}', BILLED),  # read; the cast failed, which is told otherwise
    ('{"amount": {"v": 1}}', BILLED),  # the last value is the cast's to judge
    ("null", BILLED), ('{"loc": null}', CITY), ('{}', CITY), ('{"loc": {}}', CITY),  # absence
])
def test_a_path_that_could_be_followed_has_no_such_words(text, path):
    assert unreadable_path(text, path) is None


@pytest.mark.parametrize("text, path, value", [
    ('{"dims": {"w": true}}', ("payload", "dims", "w"), "true"),  # not the whole document (session 45)
    ('{"amount": "lots"}', BILLED, "lots"),  # a string as itself, as the engines' text read gives it
    ('{"amount": 12.5}', BILLED, "12.5"),
    ('{"amount": {"v": 1}}', BILLED, '{"v":1}'),
    ('{"amount": "ü"}', BILLED, "ü"),
    ('{"other": 1}', BILLED, None), ("{not json", BILLED, None), ('{"amount": null}', BILLED, None),
])
def test_the_value_a_path_read_is_what_explain_shows(text, path, value):
    from assay.explain_paths import text_at_path

    assert text_at_path(text, path) == value
