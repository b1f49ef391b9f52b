"""A SQL check file is reported in `assay checks --json` under its stem upper-cased (decision 0948):
an id another check of the table already reports, or one that does not start with a letter (000:
`^[A-Z][A-Z0-9_]{0,127}$`), is refused at the file, every such file at once."""

from __future__ import annotations

from assay.ir.resolve import compile_spec
from tests.spec.test_every_problem_at_once import entity

CHECK = "select * from silver.orders where amount < 0\n"
DECLARED = ("    quarantine: {retention: 90d}\n",
            "    quarantine: {retention: 90d}\n    checks:\n"
            "      - {check_id: no_negative, kind: row_expectation, enforcement: required, min_rows: 1}\n")


def refusals(write_spec, files: dict) -> list[tuple[str, int, str, str]]:
    project, diagnostics, _loaded = compile_spec(write_spec(files))
    assert project is None, "the project compiled"
    return [(d.file, d.line, d.code, d.message) for d in diagnostics]


def test_ids_another_check_of_the_table_reports_are_refused_at_each_file(write_spec):
    found = refusals(write_spec, {**entity(DECLARED),
                                  "checks/silver/orders/no_negative.sql": CHECK,      # the declared check's id
                                  "checks/silver/orders/key_unique.sql": CHECK,       # the generated key audit
                                  "checks/silver/orders/_late.sql": CHECK,            # not a letter first
                                  "checks/silver/orders/big_amount.sql": CHECK})      # fine
    assert [f[:3] for f in found] == [
        ("checks/silver/orders/_late.sql", 1, "SQL_CHECK_INVALID"),
        ("checks/silver/orders/key_unique.sql", 1, "SQL_CHECK_INVALID"),
        ("checks/silver/orders/no_negative.sql", 1, "SQL_CHECK_INVALID"),
    ], found
    late, key, declared = (f[3] for f in found)
    assert "reported as check `_LATE`" in late and "`check_late.sql`" in late, late
    assert "the generated audit KEY_UNIQUE already is" in key, key
    assert "declared check NO_NEGATIVE (line" in declared and "rename the file" in declared, declared


def test_ids_that_differ_from_every_other_check_compile(write_spec):
    project, diagnostics, _loaded = compile_spec(write_spec({**entity(DECLARED), "checks/silver/orders/big_amount.sql": CHECK}))
    assert project is not None, diagnostics
    [orders] = [e for e in project.entities if e.name == "orders"]
    assert [c.reported_id for c in orders.sql_checks] == ["BIG_AMOUNT"]


def test_a_first_line_that_looks_like_a_header_is_warned_about(write_spec):
    """An outside tester (session 41): `/* ASSAY` or `/* assay:` on line 1 with `on_failure: warn`
    was read as a comment, and the check ran as `block` without a word."""
    body = "on_failure: warn\n*/\n" + CHECK
    from assay.spec.loader import load_spec
    from assay.validate import validate

    result = validate(load_spec(write_spec({
        **entity(DECLARED), "checks/silver/orders/upper.sql": "/* ASSAY\n" + body,
        "checks/silver/orders/colon.sql": "/* assay:\n" + body, "checks/silver/orders/right.sql": "/* assay\n" + body})))
    assert result.ok
    diagnostics = sorted(result.diagnostics)
    said = [(d.file, d.line, d.code, d.severity) for d in diagnostics]
    assert said == [("checks/silver/orders/colon.sql", 1, "SQL_CHECK_INVALID", "warning"),
                    ("checks/silver/orders/upper.sql", 1, "SQL_CHECK_INVALID", "warning")], said
    assert ("opens line 1 with `/* ASSAY`, which is not a header: a header's first line is `/* assay` alone, in lower "
            "case. This block is ordinary SQL and the check takes `on_failure: block`") in diagnostics[1].message
