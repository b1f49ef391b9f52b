"""Mistakes an outside tester wrote (session 33, task P1) that validation let through or answered
with advice that does not work. Each starts from the valid base spec (tests/fixtures/specs/base:
`orders` with a referential rule to `customer`) and compares the whole list of diagnostics."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.ir.resolve import compile_spec

# the customer of the base spec with a column pointing back at an order; `{via}` names its rule
CUSTOMER_HEAD = """
spec_version: 1
entities:
  customer:
    grain: one row per customer
    key: [customer_id]
    fields:
      customer_id: {{type: string, required: true}}
      tier: {{type: int}}
      first_order: {{type: string}}
    quarantine: {{retention: 30d}}
    quality:
      - {{rule: referential, via: {via}, on_missing: flag}}
"""

CUSTOMER_POINTING_BACK = CUSTOMER_HEAD.format(via="customer_first_order") + """relationships:
  - {name: customer_first_order, from: customer, to: orders, via: {first_order: order_id}}
"""

BASE = Path(__file__).parent.parent / "fixtures" / "specs" / "base"
# the base customer mapping, also reading the column pointing back
CUSTOMER_MAPPING = (BASE / "mapping_customer.yaml").read_text().replace("unmapped:", '  first_order: {from: "$.first"}\nunmapped:')


def _found(write_spec, files: dict, target: str | None = None) -> list:
    project, diagnostics, _loaded = compile_spec(write_spec(files), target)
    found = [(d.file, d.line, d.code, d.message) for d in diagnostics if d.severity == "error"]
    assert (project is None) == bool(found)
    return found


CYCLE_REASON = ("has no build order: a child is judged against its parent's published rows, so each entity of the "
                "cycle would have to be built before itself (decision 0954); keep the referential rule on one side only "
                "(the relationship itself may stay, for `coverage`), or check the other direction with a `reconcile`.")


@pytest.mark.parametrize("target", ["dbt", "sqlmesh"])
def test_referential_rules_that_close_a_cycle_are_refused_by_each_target(write_spec, target) -> None:
    """orders -> customer -> orders: each entity's staged model reads the other's published table,
    so dbt stops with `Found a cycle` and SQLMesh cannot order the models. Refused by each target,
    once, at the rule of the first entity of the cycle, naming the whole cycle."""
    files = {"entity_customer.yaml": CUSTOMER_POINTING_BACK, "mapping_customer.yaml": CUSTOMER_MAPPING}
    assert _found(write_spec, files, target) == [
        ("entity_customer.yaml", 12, "UNSUPPORTED_BY_TARGET",
         f"refused on {target}: the cycle of referential rules `customer` reads `orders` (via `customer_first_order`, "
         "entity_customer.yaml:12), `orders` reads `customer` (via `order_customer`, entity_orders.yaml:15) " + CYCLE_REASON),
    ]


def test_generate_dbt_refuses_a_cycle_as_validate_does(write_spec, tmp_path) -> None:
    """An outside tester (session 36): `assay generate dbt` wrote the project (dbt then stopped with
    `Found a cycle`) where `assay validate --target dbt` and `generate sqlmesh` refused the spec."""
    from assay.api import generate_dbt_project
    from assay.errors import SpecError

    spec = write_spec({"entity_customer.yaml": CUSTOMER_POINTING_BACK, "mapping_customer.yaml": CUSTOMER_MAPPING})
    with pytest.raises(SpecError) as refused:
        generate_dbt_project(spec, tmp_path / "project")
    assert "refused on dbt: the cycle of referential rules" in str(refused.value.diagnostics)
    assert not (tmp_path / "project").exists() or not any((tmp_path / "project").rglob("*.sql"))


def test_a_spec_with_a_cycle_is_valid_for_the_plan(write_spec) -> None:
    """Reference 001 orders a replay scope through a cycle (`assay plan`): the spec itself is valid;
    only a build cannot order it."""
    files = {"entity_customer.yaml": CUSTOMER_POINTING_BACK, "mapping_customer.yaml": CUSTOMER_MAPPING}
    assert _found(write_spec, files) == []


THREE_CYCLE = CUSTOMER_HEAD.format(via="customer_shop") + """  shop:
    grain: one row per shop
    key: [shop_id]
    fields:
      shop_id: {type: string, required: true}
      best: {type: string}
    quarantine: {retention: 30d}
    quality:
      - {rule: referential, via: shop_order, on_missing: quarantine}
relationships:
  - {name: customer_shop, from: customer, to: shop, via: {first_order: shop_id}}
  - {name: shop_order, from: shop, to: orders, via: {best: order_id}}
"""

SHOP_MAPPING = """
mapping_version: 1
source: raw_shops
target: shop
key:
  shop_id: {from: "$.id"}
fields:
  best: {from: "$.best"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""


def test_a_longer_cycle_is_refused_once(write_spec) -> None:
    """customer -> shop -> orders -> customer: three entities, one problem naming all three."""
    found = _found(write_spec, {"entity_customer.yaml": THREE_CYCLE, "mapping_customer.yaml": CUSTOMER_MAPPING,
                                "mapping_shop.yaml": SHOP_MAPPING}, "dbt")
    assert found == [
        ("entity_customer.yaml", 12, "UNSUPPORTED_BY_TARGET",
         "refused on dbt: the cycle of referential rules `customer` reads `shop` (via `customer_shop`, entity_customer.yaml:12), "
         "`shop` reads `orders` (via `shop_order`, entity_customer.yaml:21), `orders` reads `customer` (via "
         "`order_customer`, entity_orders.yaml:15) " + CYCLE_REASON),
    ]


def test_a_relationship_joining_columns_of_different_types_is_refused(write_spec) -> None:
    """An int foreign key against a string parent key: DuckDB casts the text to a number and fails
    on the first key that is not one, PostgreSQL has no `bigint = text` operator."""
    entity = (write_spec({}) / "entity_orders.yaml").read_text().replace(
        "customer_id: {type: string}", "customer_id: {type: int}").replace("on_missing: unknown_member", "on_missing: quarantine")
    mapping = (write_spec({}) / "mapping_orders.yaml").read_text()
    found = _found(write_spec, {"entity_orders.yaml": entity, "mapping_orders.yaml": mapping})
    assert found == [
        ("entity_orders.yaml", 17, "SPEC_INVALID",
         "relationship `order_customer` joins `orders.customer_id` (int) to `customer.customer_id` (string); "
         "a join compares values of one type, so declare both columns with the same type."),
    ]


def test_a_relationship_joining_an_int_to_a_decimal_is_accepted(write_spec) -> None:
    """Numbers compare with numbers whatever their precision: no refusal."""
    customer = (write_spec({}) / "entity_customer.yaml").read_text().replace("customer_id: {type: string, required: true}", "customer_id: {type: int, required: true}")
    entity = (write_spec({}) / "entity_orders.yaml").read_text().replace(
        "customer_id: {type: string}", "customer_id: {type: \"decimal(18,0)\"}").replace("on_missing: unknown_member", "on_missing: flag")
    assert _found(write_spec, {"entity_customer.yaml": customer, "entity_orders.yaml": entity}) == []


def test_a_number_where_a_duration_is_expected_is_not_told_to_quote_it(write_spec) -> None:
    """`retention: 7` quoted is `'7'`, still no duration: the sentence says what is one."""
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace("retention: 30d", "retention: 7")
    found = _found(write_spec, {"entity_customer.yaml": entity})
    assert found == [
        ("entity_customer.yaml", 9, "SPEC_GRAMMAR",
         "entities.customer.quarantine.retention is `7`, not a duration; write hours, days or weeks such as `6h`, `90d`, `2w`."),
    ]


def test_a_number_where_a_name_is_expected_is_not_told_to_quote_it(write_spec) -> None:
    """`name: 5` quoted is `'5'`, still no name (it starts with a digit)."""
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace("target: customer", "target: customer\nname: 5")
    found = _found(write_spec, {"mapping_customer.yaml": mapping})
    assert found == [
        ("mapping_customer.yaml", 4, "SPEC_GRAMMAR",
         "name is `5`; a name is lower-case letters, digits and `_`, starting with a letter."),
    ]


def test_a_number_that_quoted_would_fit_is_still_told_to_quote_it(write_spec) -> None:
    """The quoting advice stays where it works (a tolerance is a quoted decimal)."""
    entity = (write_spec({}) / "entity_orders.yaml").read_text() + (
        "reconcile:\n  - {name: totals, left: \"sum(orders.amount) by customer_id\", right: \"orders.amount\", tolerance: 0.01, on_fail: flag}\n")
    found = _found(write_spec, {"entity_orders.yaml": entity})
    assert [m for _f, _l, _c, m in found] == ["reconcile[0].tolerance is `0.01`, not text; write it in quotes: `'0.01'`."]


def test_a_key_yaml_reads_as_a_boolean_or_null_keeps_its_text(write_spec) -> None:
    """YAML 1.1 reads a plain `on`, `yes` or `null` as true or None; every key of a spec is a name,
    so the key is read as written: `on` is a field like any other, and `null` is judged as `null`,
    not as `None`."""
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace(
        "      tier: {type: int}\n", "      tier: {type: int}\n      on: {type: bool}\n      yes: {type: string}\n")
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace(
        "unmapped:", "  on: {from: \"$.on\", transform: [to_bool]}\n  yes: {from: \"$.yes\"}\nunmapped:")
    assert _found(write_spec, {"entity_customer.yaml": entity, "mapping_customer.yaml": mapping}) == []
    project, _d, _l = compile_spec(write_spec({"entity_customer.yaml": entity, "mapping_customer.yaml": mapping}))
    assert [c.name for c in project.entity("customer").columns if c.name in ("on", "yes")] == ["on", "yes"]


def _single_letter_columns(write_spec):
    """customer keyed by a column named `b`, read from a bronze column named `b` (and `s`)."""
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace(
        "key: [customer_id]", "key: [b]").replace("customer_id: {type: string, required: true}", "b: {type: string, required: true}\n      s: {type: string}")
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace(
        'customer_id: {from: "$.id", transform: [trim]}', 'b: {from: "$.b"}').replace("fields:\n", 'fields:\n  s: {from: "$.s"}\n')
    orders = (write_spec({}) / "entity_orders.yaml").read_text().replace("{customer_id: customer_id}", "{customer_id: b}")
    return {"entity_customer.yaml": entity, "mapping_customer.yaml": mapping, "entity_orders.yaml": orders}


def test_the_reject_raw_payload_reads_the_bronze_row_by_an_alias_no_column_shadows(write_spec) -> None:
    """dbt's reject model read `to_json(b)` with bronze aliased `b`: a column named `b` in the staged
    model and in bronze made DuckDB stop (`Ambiguous reference to column name "b"`), and one only in
    bronze would have been read instead of the row, a `raw` that replay cannot re-run."""
    from assay.lower.outputs import diverted_select
    from assay.targets.dbt.spelling import DBT
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    project, diagnostics, _loaded = compile_spec(write_spec(_single_letter_columns(write_spec)))
    assert project is not None, diagnostics
    entity = project.entity("customer")
    [mapping] = entity.mappings
    named = {c.name for c in entity.columns} | set(mapping.bronze_columns)
    assert {"b", "s"} <= named
    for sp in (DBT, SqlmeshSpelling("duckdb", project)):
        sql = diverted_select(sp, entity, mapping)
        assert sp.row_alias not in named
        assert f"{sp.bronze(mapping.source)} as {sp.row_alias}" in sql.replace("AS", "as"), sql


def test_a_bronze_column_named_like_a_step_column_is_refused(write_spec) -> None:
    """A mapping's select computes a chain's steps in `_assay_step_<i>_<n>` columns beside bronze's
    own (decision 1163): a bronze column of that name would be two columns of one name."""
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace(
        '"$._source_row_id"]', '"$._source_row_id", "$._Assay_Step_1_0"]')
    found = _found(write_spec, {"mapping_customer.yaml": mapping})
    assert [(f, code) for f, _ln, code, _m in found] == [("mapping_customer.yaml", "SPEC_INVALID")], found
    assert found[0][3].startswith("mapping `raw_customers` into `customer` names the bronze column `_Assay_Step_1_0`; names "
                                  "that start with `_assay_step_` are the columns assay computes"), found[0][3]


def test_a_field_or_bronze_column_named_like_the_row_alias_is_refused(write_spec) -> None:
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace("      tier: {type: int}\n", "      tier: {type: int}\n      bronze_row: {type: string}\n")
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace('"$._source_row_id"]', '"$._source_row_id", "$.bronze_row"]')
    found = _found(write_spec, {"entity_customer.yaml": entity, "mapping_customer.yaml": mapping})
    assert [(f, ln, code) for f, ln, code, _m in found] == [
        ("entity_customer.yaml", 9, "SPEC_INVALID"), ("mapping_customer.yaml", 8, "SPEC_INVALID")], found
    assert "`bronze_row`); rename the field." in found[0][3]
    assert found[1][3] == (
        "mapping `raw_customers` into `customer` names the bronze column `bronze_row`, the name a reject row's `raw` "
        "payload reads the whole bronze row by; the column would be read instead of the row. Rename the column in "
        "bronze (or load it under another name).")


def test_a_function_an_engine_lacks_is_a_warning_naming_the_engines(tmp_path):
    """`lenght(x)` validated and then stopped `dbt build` (DuckDB: no such function); an engine's
    own function (`strlen`) works there and stops the build elsewhere; `year(d)`, which sqlglot
    knows, is written `YEAR(d)` for PostgreSQL, which has none (an outside tester, session 43).
    Validation warns at the line, naming the engines from their catalogs (decision 1151)."""
    import shutil

    from assay.spec.loader import load_spec
    from assay.validate import validate

    root = Path(__file__).resolve().parents[2] / "examples" / "shop"
    spec = tmp_path / "shop"
    shutil.copytree(root, spec)
    entities = spec / "spec" / "entities.yml"
    entities.write_text(entities.read_text().replace(
        'expr: "discount <= amount"',
        'expr: "lenght(status) > 0 and strlen(status) > 0 and length(status) > 0 and year(ordered_at) > 2000 '
        'and extract(year from ordered_at) > 2000 and try_cast(status as int) is null"'))

    def said(target, dialect=None):
        diags = validate(load_spec(spec), target, dialect).diagnostics
        found = [(d.code, d.message) for d in diags if "calls `" in d.message]
        assert {d.severity for d in diags if "calls `" in d.message} == {"warning"}
        assert {d.line for d in diags if "calls `" in d.message} == {entities.read_text().splitlines().index(
            next(x for x in entities.read_text().splitlines() if "lenght" in x)) + 1}
        return found

    typo = ("SPEC_FUNCTION", "expression rule `discount_not_above_amount` of entity `order` calls `lenght`, which "
            "no engine assay runs on has (DuckDB, PostgreSQL 15 and 18, Spark): the build stops unless the database "
            "defines it. Did you mean `length`?")
    rule = "expression rule `discount_not_above_amount` of entity `order` calls"
    dbt = said("dbt")
    assert dbt[0] == typo and len(dbt) == 3, dbt
    assert f"note on dbt: {rule} `strlen`, a function PostgreSQL 15, PostgreSQL 18 and Spark do not have" in dbt[1][1]
    assert f"note on dbt: {rule} `year`, a function PostgreSQL 15 and PostgreSQL 18 do not have" in dbt[2][1]
    assert said("sqlmesh", "duckdb") == [typo]
    pg = said("sqlmesh", "postgres")
    assert [m.split(", a function")[0] for _c, m in pg[1:]] == [
        f"note on sqlmesh --dialect postgres: {rule} `strlen`", f"note on sqlmesh --dialect postgres: {rule} `year`"]
    spark = said("sqlmesh", "spark")
    assert len(spark) == 2 and f"{rule} `strlen`, a function Spark does not have" in spark[1][1]


def test_the_function_catalogs_hold_what_the_installed_duckdb_calls():
    """The DuckDB catalog is the installed engine's (scripts/engine_functions.py writes it): a name
    DuckDB has that the catalog lacks would be warned of falsely. PostgreSQL's and Spark's are
    held to their servers in tests/integration/test_engine_functions.py."""
    import duckdb

    from assay.engine_functions import names

    con = duckdb.connect()
    have = {r[0].lower() for r in con.execute("select distinct function_name from duckdb_functions() "
                                              "where function_type in ('scalar', 'macro')").fetchall()}
    have = {n for n in have if n.replace("_", "a").isalnum()}
    assert have - names("duckdb") == set(), "run scripts/engine_functions.py duckdb"


@pytest.mark.parametrize(("written", "read"), [("yes", "True"), ("1.10", "1.1")])
def test_a_string_set_value_yaml_reads_as_a_boolean_or_a_fraction_is_refused(write_spec, written, read) -> None:
    """`in_set: [G, yes]` on a string field compared with 'true', `1.10` with '1.1': the rows that
    hold the value as written fail the rule (an outside tester, session 45). Quoted, it is the text."""
    def spec(value: str) -> dict:
        mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace(
            "unmapped:", f"  first_order: {{from: \"$.first\", quality: [{{rule: in_set, values: [G, {value}], on_fail: flag}}]}}\nunmapped:")
        entity = (write_spec({}) / "entity_customer.yaml").read_text().replace(
            "      tier: {type: int}\n", "      tier: {type: int}\n      first_order: {type: string}\n")
        return {"mapping_customer.yaml": mapping, "entity_customer.yaml": entity}

    found = _found(write_spec, spec(written))
    assert [f for f, _l, _c, _m in found] == ["mapping_customer.yaml"], found
    message = found[0][3]
    assert f"lists {read}, which YAML reads as" in message and "quote each value as the data spells it" in message, message
    assert _found(write_spec, spec(f"'{written}'")) == []


@pytest.mark.parametrize("path, chars", [("$.issue date", "' '"), ("$.fee-amount", "'-'"), ("$.größe", "'ß', 'ö'"),
                                         ("$.payload.número", "'ú'")])
def test_a_path_naming_a_column_no_path_can_hold_says_why_and_the_way_around(write_spec, path, chars) -> None:
    """An outside tester (session 45) read only "write `$.<bronze column>`" of `$.issue date`."""
    mapping = (write_spec({}) / "mapping_customer.yaml").read_text().replace(
        'tier: {from: "$.tier"', f'tier: {{from: "{path}"')
    found = _found(write_spec, {"mapping_customer.yaml": mapping})
    assert len(found) == 1, found
    message = found[0][3]
    assert message.startswith(f"`from: {path}` of `tier` names a column or key with characters a path cannot hold ({chars})"), message
    assert "Rename it in a view over the bronze table" in message, message


def test_an_expression_that_uses_a_keyword_as_a_column_is_told_to_quote_it() -> None:
    # an outside tester (session 45): `from <= to` was refused with no word of quoting
    from assay.validate.expressions import parse_expression

    tree, problems = parse_expression("from <= to")
    assert tree is None and problems[0].endswith('`from` is a SQL keyword: a column so named is written in double quotes (`"from"`).'), problems
    assert parse_expression('"from" <= "to"')[1] == []
    _tree, problems = parse_expression("amount >= and")
    assert "double quotes" not in problems[0], problems


def test_a_lower_case_name_over_63_characters_is_told_its_length(write_spec) -> None:
    # an outside tester (session 45) was told to write lower-case letters, which the name was
    long_field, long_entity = "f" * 64, "e" * 64
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace(
        "      tier: {type: int}\n", f"      tier: {{type: int}}\n      {long_field}: {{type: string}}\n")
    found = _found(write_spec, {"entity_customer.yaml": entity})
    assert any(f"field `{long_field}` of entity `customer` is 64 characters, over the 63 PostgreSQL allows" in m
               for _f, _l, _c, m in found), found
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace("  customer:", f"  {long_entity}:")
    found = _found(write_spec, {"entity_customer.yaml": entity})
    assert any(f"entity name `{long_entity}` is 64 characters" in m and "at most 55" in m for _f, _l, _c, m in found), found


def test_a_referential_rules_name_too_long_is_shortened_at_its_relationship(write_spec) -> None:
    # its name is its relationship's: "shorten the field's name, or name the rule yourself" could
    # not be followed (an outside tester, session 45)
    long_rel = "order_customer_" + "x" * 50
    entity = (write_spec({}) / "entity_orders.yaml").read_text().replace("order_customer", long_rel)
    found = _found(write_spec, {"entity_orders.yaml": entity})
    assert len(found) == 1 and found[0][3].endswith("shorten the relationship's name."), found


def test_an_assert_clause_records_only_a_contract_a_value_can_meet(write_spec) -> None:
    """`assert:` routes no row, but its bounds are recorded as the column's contract; one that is no
    value of the field's type, bounds no value satisfies, or a bound on text is refused where it is
    written (every problem at once). A regex is recorded as written: nothing evaluates it."""
    entity = (write_spec({}) / "entity_customer.yaml").read_text().replace(
        "      tier: {type: int}\n",
        "      tier: {type: int, assert: {min: 10, max: 2}}\n"
        "      born: {type: date, assert: {min: \"2026-13-01\"}}\n"
        "      seen: {type: timestamp, assert: {min: \"2026-01-01T00:00:00Z\", max: \"2027-01-01\"}}\n"
        "      name: {type: string, assert: {max: 5, regex: \"[a-\"}}\n")
    found = _found(write_spec, {"entity_customer.yaml": entity})
    assert [(ln, code) for _f, ln, code, _m in found] == [
        (8, "SPEC_INVALID"), (9, "SPEC_INVALID"), (11, "SPEC_INVALID")], found
    messages = [m for *_x, m in found]
    assert messages[0] == ("`assert` of field `tier` of entity `customer` has `min: 10` above `max: 2`, which no value "
                           "satisfies; swap them."), messages[0]
    assert messages[1] == "`min` of `assert` of field `born` of entity `customer`: '2026-13-01' is not an ISO date; write YYYY-MM-DD."
    assert messages[2].startswith("`assert` of field `name` of entity `customer` has `max: 5`; a bound compares numbers"), messages[2]
