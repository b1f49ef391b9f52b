"""A SQL check file whose query errored (decision 0511) renders as `errored: <the engine's message>`."""

from assay.checks.recorded import verdict_of_row


def test_an_errored_sql_check_renders_the_engines_message():
    v = verdict_of_row("sql", '{"bounds": {"on_failure": "warn"}}',
                       '{"rows": 0, "failing_rows": null, "error": "invalid input syntax for type integer: \\"apple\\""}')
    assert (v.passed, v.detail) == (False, 'errored: invalid input syntax for type integer: "apple"')


def test_a_counted_sql_check_is_unchanged():
    v = verdict_of_row("sql", '{"bounds": {"on_failure": "keep"}}', '{"rows": 2, "failing_rows": 2}')
    assert (v.passed, v.detail) == (False, "returned 2 rows (kept)")
