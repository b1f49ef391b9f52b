"""A transform's number that no engine's decimal literal holds is refused at its line, with what to
write instead (an outside tester's `multiply: 1e999999` validated and reached the warehouse as
`Infinity`); one that fits is written positionally, never in exponent form."""

from __future__ import annotations

import pytest

from assay.spec.transforms import parse_step


@pytest.mark.parametrize("raw", [{"multiply": 1e999999}, {"multiply": "1e999999"}, {"divide": "1e40"},
                                 {"multiply": 0.0000000000000000001}, {"round": 10**23}, {"round": -39},
                                 {"multiply": "nan"}, {"divide": 0}])
def test_out_of_range_arguments_are_refused_with_what_to_write(raw):
    step, problem = parse_step(raw)
    assert step is None and problem is not None
    name = next(iter(raw))
    assert problem.startswith(f"`{name}` takes ") and "write e.g." in problem, problem


@pytest.mark.parametrize("raw", [{"multiply": 100}, {"multiply": "0.001"}, {"divide": 1e-18}, {"round": 2},
                                 {"round": -2}, {"multiply": "12345678901234567890123456789"}])
def test_arguments_an_engine_holds_are_taken(raw):
    step, problem = parse_step(raw)
    assert problem is None and step is not None


def test_a_small_factor_is_written_without_an_exponent():
    from assay.lower.fields import lower_step
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    step, _ = parse_step({"multiply": 1e-7})
    expr, _ = lower_step(SqlmeshSpelling("duckdb"), "x", step, "decimal(12,2)", False)
    assert "0.0000001" in expr and "E" not in expr.upper().replace("X", ""), expr


@pytest.mark.parametrize("raw, said", [
    ({"regex_extract": ["(a", 1]}, "the pattern does not compile"),  # an outside tester's (session 36): the build stopped
    ({"regex_extract": ["[0-9", 0]}, "the pattern does not compile"),
    ({"regex_extract": ["^([0-9]+)-([a-z]+)$", 3]}, "has 2 capturing groups, so group 3 is never there"),
    ({"regex_extract": ["^[0-9]+$", 1]}, "has 0 capturing groups"),
])
def test_a_regex_extract_no_engine_runs_is_refused(raw, said):
    step, problem = parse_step(raw)
    assert step is None and said in problem, problem


@pytest.mark.parametrize("raw", [{"regex_extract": ["^([0-9]+)-([a-z]+)$", 2]}, {"regex_extract": ["[0-9]+", 0]}])
def test_a_regex_extract_that_runs_is_taken(raw):
    step, problem = parse_step(raw)
    assert problem is None and step is not None
