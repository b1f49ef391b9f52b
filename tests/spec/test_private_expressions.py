"""A `pii` field's value passes in an expression rule only through forms no engine raises an error
on (decision 1152): an engine's message quotes the value (`strptime(full_name, ...)`, an overflow in
`ssn * 1000`, a JSON function over malformed text), and dbt and SQLMesh print it to the console
and their logs (session 43's closing note: the one leak of a pii value left after decision 1146)."""

from __future__ import annotations

import duckdb
import pytest

from assay.ir.resolve import compile_spec
from assay.validate.expressions import parse_expression, private_problems

PRIVATE = frozenset({"name", "ssn", "born"})

ACCEPTED = [
    "length(name) > 3", "name like '%@%'", "regexp_matches(name, '[a-z]')", "name ~ '[A-Z][a-z]+'",
    "lower(trim(name)) <> 'x'", "coalesce(name, '') <> ''", "name in ('a', 'b')", "starts_with(name, 'A')",
    "strpos(name, ' ') > 0", "substring(name, 1, 1) = 'A'", "name is not null and ssn between 1 and 9",
    "try_cast(name as int) is null", "cast(ssn as int) > 0", "born <= current_date",
    "date_diff('year', born, current_date) < 120", "extract(year from born) > 1900", "year(born) > 1900",
    "case when name = 'x' then amount > 1 else true end", "amount * 1000 > 0 and name is not null",
]
REFUSED = {
    "strptime(name, '%Y') is not null": "STRPTIME(name, '%Y')",
    "ssn * 1000 > 0": "ssn * 1000",
    "cast(ssn as int) + 1 > 0": "CAST(ssn AS INT) + 1",
    "cast(name as double) > 0": "CAST(name AS DOUBLE)",
    "json_extract(name, '$.a') is null": "name -> '$.a'",
    "abs(ssn) > 0": "ABS(ssn)",
}


@pytest.mark.parametrize("text", ACCEPTED)
def test_forms_that_cannot_fail_pass(text):
    tree, problems = parse_expression(text)
    assert problems == [] and private_problems(tree, PRIVATE) == []


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_forms_an_engine_may_fail_on_are_refused(text):
    tree, problems = parse_expression(text)
    [sentence] = private_problems(tree, PRIVATE)
    assert problems == [] and sentence.startswith("passes the pii field `")
    assert f"through `{REFUSED[text]}`, which an engine may stop on with an error that quotes the value" in sentence


def test_what_is_refused_is_what_an_engine_quotes():
    """Why: DuckDB's own messages for these forms quote the value."""
    con = duckdb.connect()
    for sql, value in [("select strptime('Zelda Canaryperson', '%Y')", "Zelda Canaryperson"),
                       ("select cast(9123456789123456789 as bigint) * 1000", "9123456789123456789"),
                       ("select json_extract('Zelda{', '$.a')", "Zelda{")]:
        with pytest.raises(duckdb.Error) as err:
            con.execute(sql).fetchall()
        assert value in str(err.value), sql


def test_refused_at_the_rule_line_with_what_to_write(write_spec):
    spec = write_spec({})
    path = spec / "entity_orders.yaml"
    text = path.read_text().replace("status: {type: string}", "status: {type: string, classification: pii}")
    anchor = "on_missing: unknown_member}\n"
    path.write_text(text.replace(anchor, anchor + '      - {rule: expression, name: st, expr: "strptime(status, \'%Y\') < now()", on_fail: flag}\n'))
    project, diags, _ = compile_spec(spec)
    assert project is None
    line = path.read_text().splitlines().index(next(x for x in path.read_text().splitlines() if "strptime" in x)) + 1
    assert [(d.file, d.line, d.code, d.message) for d in diags if d.severity == "error"] == [(
        "entity_orders.yaml", line, "SPEC_INVALID",
        "expression rule `st` of entity `orders` passes the pii field `status` through `STRPTIME(status, '%Y')`, which "
        "an engine may stop on with an error that quotes the value; over a pii field write comparisons, null and regex "
        "tests, `try_cast`, and the text and date functions that cannot fail (length, lower, upper, trim, substring, "
        "strpos, starts_with, coalesce, extract, date_diff, ...), or derive the value in the field's transforms.")]
