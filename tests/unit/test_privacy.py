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
