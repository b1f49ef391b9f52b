"""What assay may show of a value (generator/assay/privacy.py, docs/privacy.md; issue 19)."""

from __future__ import annotations

from pathlib import Path

from assay.api import load_project
from assay.privacy import HIDDEN, hidden_names, shown_values
from assay.targets.dbt.declared_checks import redacted_columns

ROOT = Path(__file__).resolve().parents[2]


def test_pii_fields_and_their_bronze_columns_are_hidden_and_redacted_columns_left_out():
    customer = load_project(ROOT / "examples" / "shop").entity("customer")
    # email is classified pii and read from bronze `email`; phone is redacted
    assert hidden_names(customer) == {"email"}
    assert shown_values({"id": "c1", "email": "a@b.c", "phone": "555", "tier": None}, hidden_names(customer), customer.redact) == {
        "id": "c1", "email": HIDDEN, "tier": None}
    assert shown_values({"email": None}, {"email"}) == {"email": None}  # no value is no private fact
    # the rows a failing check keeps (assay check rows) never copy either
    assert redacted_columns(customer) == ["email", "phone"]


def test_the_quickstart_names_dbts_warning_for_what_it_is():
    text = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert "`WARN=1` (a flagged rule)" not in text
    assert "coverage test `assay_coverage__every_customer_ordered`" in text


def test_a_failed_dbt_runs_lines_keep_dbts_words_and_the_kind_of_the_engines():
    """`assay plan --data` for a private spec (decision 1145): dbt's own lines name the node and
    file; of the engine's message, which gives the value bare or under a caret, only its kind."""
    from assay.privacy import MESSAGE_WITHHELD
    from assay.runtime.dbt import DbtRun

    stdout = "\n".join([
        "12:00:01  Completed with 1 error, 0 partial successes, and 0 warnings:",
        "12:00:01  ",
        "12:00:01  Failure in model patient__staged (models/assay/patient/patient__staged.sql)",
        "12:00:01    Runtime Error in model patient__staged (models/assay/patient/patient__staged.sql)",
        "  Invalid Input Error: Could not parse string \"CNRY\" according to format specifier \"%Y\"",
        "  CNRY-NAME",
        "  ^",
        "12:00:01    compiled code at target/compiled/clinic/models/assay/patient/patient__staged.sql",
        "12:00:01  Done. PASS=1 WARN=0 ERROR=1 SKIP=0 TOTAL=2",
    ])
    lines = DbtRun(("build",), 1, stdout, "").private_error_lines()
    assert "CNRY" not in "\n".join(lines)
    assert lines == [
        "Completed with 1 error, 0 partial successes, and 0 warnings:",
        "Failure in model patient__staged (models/assay/patient/patient__staged.sql)",
        "  Runtime Error in model patient__staged (models/assay/patient/patient__staged.sql)",
        f"  Invalid Input Error ({MESSAGE_WITHHELD})",
        "  compiled code at target/compiled/clinic/models/assay/patient/patient__staged.sql",
    ]
