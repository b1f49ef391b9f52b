"""Generated rule names: part of the interface, since flags, reject rows and the mart carry them."""

from __future__ import annotations

import pytest

from assay.ir.naming import NameAllocator, base_name, fold
from assay.ir.resolve import compile_spec

UNMAPPED = 'unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]\n'


def orders_mapping(fields: str, source: str = "raw_orders") -> str:
    """A mapping into the base `orders` entity; `fields` is YAML at two spaces, from line 7."""
    return f'mapping_version: 1\nsource: {source}\ntarget: orders\nkey:\n  order_id: {{from: "$.id"}}\nfields:\n{fields}{UNMAPPED}'


def rules_of(write_spec, files: dict, entity: str = "orders") -> dict:
    project, diagnostics, _loaded = compile_spec(write_spec(files))
    assert diagnostics == []
    return {r.name: r for r in project.entity(entity).rules}


@pytest.mark.parametrize(
    "kind, params, expected",
    [
        ("not_null", {}, "amount_not_null"),
        ("range", {"min": "0"}, "amount_range_min"),
        ("range", {"max": "9"}, "amount_range_max"),
        ("range", {"min": "0", "max": "9"}, "amount_range"),
        ("length", {"min": 1}, "amount_length_min"),
        ("length", {"max": 9}, "amount_length_max"),
        ("length", {"min": 1, "max": 9}, "amount_length"),
        ("in_set", {"values": ("a",)}, "amount_in_set"),
    ],
)
def test_base_names(kind: str, params: dict, expected: str) -> None:
    assert base_name(kind, "amount", params) == expected


def test_referential_is_named_after_its_relationship_and_names_fold() -> None:
    assert base_name("referential", None, {}, relationship="order_customer") == "order_customer_referential"
    assert fold("Order-Customer.x") == "order_customer_x"


def test_the_allocator_numbers_collisions_from_2_and_reports_authored_names() -> None:
    names = NameAllocator(authored={"a_unique_2"})
    assert [names.take("a_unique") for _ in range(3)] == [("a_unique", False), ("a_unique_2", True), ("a_unique_3", False)]


def test_collisions_get_2_and_3_in_declaration_order(write_spec) -> None:
    fields = (
        "  status:\n"
        '    from: "$.status"\n'
        "    quality:\n"
        "      - {rule: length, max: 20, on_fail: flag}\n"
        "      - {rule: length, max: 10, on_fail: quarantine}\n"
        "      - {rule: length, max: 5, on_fail: fail}\n"
        "      - {rule: length, min: 1, on_fail: flag}\n"
        "      - {rule: length, min: 1, max: 9, on_fail: flag}\n"
    )
    rules = rules_of(write_spec, {"mapping_orders.yaml": orders_mapping(fields)})
    got = {n: (r.disposition, r.params) for n, r in rules.items() if n.startswith("status_length")}
    assert got == {
        "status_length_max": ("flag", (("max", 20),)),
        "status_length_max_2": ("quarantine", (("max", 10),)),
        "status_length_max_3": ("fail", (("max", 5),)),
        "status_length_min": ("flag", (("min", 1),)),
        "status_length": ("flag", (("max", 9), ("min", 1))),
    }


def test_two_mappings_into_one_entity_number_their_rules_by_mapping_name(write_spec) -> None:
    # Field rules judge the rows of their own mapping, so each mapping's coercible is a rule of its
    # own; the mapping first by name keeps the plain name, whatever file it is written in (decision
    # 0959: by file, `mapping_eu.yaml` took it, and renaming a file renamed the rules).
    eu = orders_mapping('  amount: {from: "$.betrag", transform: [{to_decimal: [12, 2]}]}\n', source="raw_orders_eu")
    rules = rules_of(write_spec, {"mapping_eu.yaml": eu})
    assert (rules["amount_coercible"].mapping, rules["amount_coercible_2"].mapping) == ("raw_orders", "raw_orders_eu")
    assert (rules["order_id_coercible"].mapping, rules["order_id_coercible_2"].mapping) == ("raw_orders", "raw_orders_eu")


def test_an_expression_keeps_its_name_and_the_list_is_sorted(write_spec) -> None:
    entity = (write_spec({}) / "entity_orders.yaml").read_text().replace(
        "    quality:\n", '    quality:\n      - {rule: expression, name: a_first, expr: "amount > 0", on_fail: flag}\n'
    )
    rules = rules_of(write_spec, {"entity_orders.yaml": entity})
    assert rules["a_first"].kind == "expression"
    assert list(rules) == sorted(rules)


def _with_expression(write_spec, name: str, mapping: str | None = None) -> list:
    spec = write_spec({})
    entity = (spec / "entity_orders.yaml").read_text().replace(
        "    quality:\n", f'    quality:\n      - {{rule: expression, name: {name}, expr: "amount > 0", on_fail: flag}}\n'
    )
    files = {"entity_orders.yaml": entity}
    if mapping is not None:
        files["mapping_orders.yaml"] = mapping
    project, diagnostics, _loaded = compile_spec(write_spec(files))
    assert project is None
    return [(d.file, d.line, d.code, d.message) for d in diagnostics]


def test_an_expression_named_like_an_implicit_rule_is_refused(write_spec) -> None:
    assert _with_expression(write_spec, "amount_coercible") == [
        (
            "entity_orders.yaml",
            15,
            "SPEC_INVALID",
            "expression rule `amount_coercible` of entity `orders` has the name assay generates for the implicit "
            "`coercible` rule on `amount` in mapping `raw_orders` (mapping_orders.yaml:8); generated names are part "
            "of the interface (flags, reject rows, the mart), so rename the expression rule, e.g. `amount_coercible_check`.",
        )
    ]


def test_an_expression_named_like_a_referential_rule_is_refused(write_spec) -> None:
    assert _with_expression(write_spec, "order_customer_referential") == [
        (
            "entity_orders.yaml",
            15,
            "SPEC_INVALID",
            "expression rule `order_customer_referential` of entity `orders` has the name assay generates for the "
            "`referential` rule via `order_customer` (entity_orders.yaml:16); generated names are part of the "
            "interface (flags, reject rows, the mart), so rename the expression rule, e.g. "
            "`order_customer_referential_check`.",
        )
    ]


def test_an_expression_named_like_a_numbered_generated_rule_is_refused(write_spec) -> None:
    # The generated names do not move aside for an authored one: `amount_range_min_2`
    # stays the second range rule's name whatever an expression is called.
    fields = (
        "  amount:\n"
        '    from: "$.amount"\n'
        "    quality:\n"
        "      - {rule: range, min: 0, on_fail: flag}\n"
        "      - {rule: range, min: 1, on_fail: quarantine}\n"
    )
    [(file, line, code, message)] = _with_expression(write_spec, "amount_range_min_2", orders_mapping(fields))
    assert (file, line, code) == ("entity_orders.yaml", 15, "SPEC_INVALID")
    assert message.startswith(
        "expression rule `amount_range_min_2` of entity `orders` has the name assay generates for the `range` rule "
        "on `amount` in mapping `raw_orders` (mapping_orders.yaml:11);"
    )
