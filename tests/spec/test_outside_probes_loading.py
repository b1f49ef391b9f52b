"""Spec loading mistakes an outside tester wrote (session 34, task Q5) that the loader let through,
answered with advice that does not work, or answered with a traceback. Each starts from the valid
base spec (tests/fixtures/specs/base) and compares the whole list of diagnostics (decision 0977)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.ir.resolve import compile_spec

# the base spec's customer: `customer_id` on line 7, `tier: {type: int}` on line 8
CUSTOMER = (Path(__file__).parent.parent / "fixtures" / "specs" / "base" / "entity_customer.yaml").read_text()
TYPES = ("Write one of string, int, bool, date, timestamp, variant or decimal(p,s) with 1 <= p <= 38 "
         "and 0 <= s <= p.")


def _found(write_spec, files: dict) -> list:
    project, diagnostics, _loaded = compile_spec(write_spec(files))
    found = [(d.file, d.line, d.code, d.message) for d in diagnostics if d.severity == "error"]
    assert (project is None) == bool(found)
    return found


def _customer(old: str, new: str) -> dict:
    assert old in CUSTOMER
    return {"entity_customer.yaml": CUSTOMER.replace(old, new)}


@pytest.mark.parametrize("written, shown", [("5", "`5`"), ("1.5", "`1.5`"), ("[int]", "a list"), ("", "empty")])
def test_a_type_that_is_no_text_is_told_the_type_names(write_spec, written, shown) -> None:
    """`type: 5` was told to quote itself, and `'5'` is then refused as no type: one message, the
    vocabulary, as for a text that is no type."""
    assert _found(write_spec, _customer("tier: {type: int}", f"tier: {{type: {written}}}")) == [
        ("entity_customer.yaml", 8, "SPEC_GRAMMAR", f"entities.customer.fields.tier.type is {shown}, not a type name. {TYPES}"),
    ]


@pytest.mark.parametrize("written, message", [
    ('"yes"', "is `yes`; write `true` or `false` without quotes."),
    ("'false'", "is `false`; write `true` or `false` without quotes."),
    ("maybe", "is `maybe`; write `true` or `false`."),
    ("1", "is `1`; write `true` or `false`."),
    ("0", "is `0`; write `true` or `false`."),
])
def test_a_boolean_written_as_text_or_number_is_refused(write_spec, written, message) -> None:
    """pydantic read the texts "yes" and "false" and the numbers 1 and 0 as booleans: a quoted word
    is a text in YAML, and a number no boolean. Refused, saying what to write."""
    found = _found(write_spec, _customer("tier: {type: int}", f"tier: {{type: int, required: {written}, assert: {{not_null: {written}}}}}"))
    assert found == [
        ("entity_customer.yaml", 8, "SPEC_GRAMMAR", f"entities.customer.fields.tier.assert.not_null {message}"),
        ("entity_customer.yaml", 8, "SPEC_GRAMMAR", f"entities.customer.fields.tier.required {message}"),
    ]


@pytest.mark.parametrize("written", ["true", "yes", "on", "True", "false", "no", "off"])
def test_a_yaml_boolean_is_a_boolean(write_spec, written) -> None:
    """YAML 1.1 (the YAML assay and dbt read) writes booleans `true`, `yes` or `on`, unquoted."""
    assert _found(write_spec, _customer("tier: {type: int}", f"tier: {{type: int, required: {written}}}")) == []


@pytest.mark.parametrize("text", ["", "# a spec will go here\n\n# later\n", "---\n", "null\n"])
def test_a_file_holding_no_document_is_said(write_spec, text) -> None:
    """An empty spec file (or only comments) was read as nothing, silently: a warning names it
    (decision 0977), and the rest of the spec still compiles."""
    project, diagnostics, loaded = compile_spec(write_spec({"entity_later.yaml": text}))
    assert project is not None and diagnostics == []
    assert [(d.file, d.line, d.code, d.severity, d.message) for d in loaded.diagnostics] == [
        ("entity_later.yaml", 1, "SPEC_EMPTY", "warning",
         "this file holds no document (it is empty, or only comments), so it declares nothing; write a spec document "
         "in it, starting with `spec_version: 1`, `mapping_version: 1` or `tables_version: 1`, or delete the file."),
    ]


def test_a_key_written_beside_a_merge_key_overrides_it(write_spec) -> None:
    """`<<: *base` then `type: int` is what a YAML merge key is for: the written key wins, and was
    refused as "written twice". Two merged sources: the first listed wins. A key written twice beside
    a merge key is still a duplicate."""
    fields = ("      tier: &t {type: string, description: shared}\n"
              "      rank: {<<: *t, type: int}\n"
              "      note: {<<: [{type: date}, *t]}\n"
              "      code:\n"
              "        <<: *t\n"
              "        description: own\n")
    twice = _customer("      tier: {type: int}\n", fields + "        description: again\n")
    assert _found(write_spec, twice) == [
        ("entity_customer.yaml", 14, "SPEC_GRAMMAR",
         "`description` is written twice at the same level (first on line 13); YAML would keep only the last one silently, so keep one of them."),
    ]
    project, diagnostics, loaded = compile_spec(write_spec(_customer("      tier: {type: int}\n", fields)))
    assert diagnostics == []
    declared = next(doc for file, doc, _raw in loaded.entity_docs if file == "entity_customer.yaml").entities["customer"].fields
    assert {k: (f.type, f.description) for k, f in declared.items() if k != "customer_id"} == {
        "tier": ("string", "shared"), "rank": ("int", "shared"), "note": ("date", "shared"), "code": ("string", "own")}


@pytest.mark.parametrize("text, line", [
    ("spec_version: 1\nentities:\n  customer:\n    description: " + "[" * 3000 + "]" * 3000 + "\n", 4),
    ("spec_version: 1\nentities:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(1500)), 65),
])
def test_a_document_nested_too_deep_is_refused_not_a_traceback(write_spec, text, line) -> None:
    """Thousands of levels of nesting made PyYAML's composer raise RecursionError, a traceback."""
    assert _found(write_spec, {"deep.yaml": text}) == [
        ("deep.yaml", line, "SPEC_YAML",
         "not valid YAML: the document is nested more than 64 levels deep here; a spec needs far fewer, so close the "
         "open `[`/`{` or indent less"),
    ]


def test_aliases_that_repeat_millions_of_values_are_refused_at_once(write_spec) -> None:
    """An outside tester (session 36): nine levels of nine aliases each (387 million values from a
    dozen lines) kept every command busy for minutes without an answer."""
    import time

    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    started = time.monotonic()
    assert _found(write_spec, {"lol.yaml": "spec_version: 1\n" + "\n".join(lines) + "\n"}) == [
        ("lol.yaml", 1, "SPEC_YAML",
         "not valid YAML: its aliases (`*name`) repeat more than 1,000,000 values; a spec repeats far less, so write "
         "the repeated part out or nest fewer aliases in aliases"),
    ]
    assert time.monotonic() - started < 30
    # a few aliases, as a spec uses them, are read as before
    assert not [d for d in _found(write_spec, {"ok.yaml": "spec_version: 1\nx: &x [1, 2]\ny: [*x, *x]\n"})
                if d[2] == "SPEC_YAML"]


@pytest.mark.parametrize("text, line", [
    ("spec_version: 1\nentities:\n  thing: &x\n    grain: x\n    key: [id]\n    sub: *x\n", 3),
    ("spec_version: 1\nentities: &y\n  - *y\n", 2),
])
def test_an_alias_inside_its_own_anchor_is_refused_not_a_traceback(write_spec, text, line) -> None:
    """An outside tester (session 41): `&x {sub: *x}` printed a 3,000-line RecursionError."""
    assert _found(write_spec, {"rec.yaml": text}) == [
        ("rec.yaml", line, "SPEC_YAML",
         "not valid YAML: an alias (`*name`) here repeats a node that holds it, so the value never ends; a spec value "
         "is finite: write the repeated part out instead of naming its own anchor inside it"),
    ]


def test_a_utf16_file_does_not_echo_as_undeclared_entities(write_spec) -> None:
    """A file saved as UTF-16 is refused once; the entity it declares is not reported again as
    undeclared by the relationship and the mapping that name it."""
    root = write_spec({})
    (root / "entity_customer.yaml").write_bytes(CUSTOMER.lstrip("\n").encode("utf-16"))
    project, diagnostics, _loaded = compile_spec(root)
    assert [(d.file, d.line, d.code) for d in diagnostics] == [("entity_customer.yaml", 1, "SPEC_ENCODING")]


@pytest.mark.parametrize("name", ["entity_customer.YAML", "entity_customer.Yml"])
def test_a_spec_file_ending_in_capitals_is_read(write_spec, name) -> None:
    """`*.yml` matched case-sensitively on Linux only: `.YAML` was read on macOS and silently
    skipped here (its entity then "not declared")."""
    files = {"entity_customer.yaml": None, name: CUSTOMER.replace("tier: {type: int}", "tier: {type: intt}")}
    assert _found(write_spec, files) == [
        (name, 8, "SPEC_INVALID", f"field `tier` of entity `customer` has type `intt`. Did you mean `int`? {TYPES}"),
    ]


def test_a_merge_key_of_no_mapping_says_what_to_merge(write_spec) -> None:
    """`<<: 5` is a YAML mistake at its line, with what `<<:` takes."""
    assert _found(write_spec, _customer("tier: {type: int}", "tier: {<<: [{type: int}, 5]}")) == [
        ("entity_customer.yaml", 8, "SPEC_YAML",
         "not valid YAML: `<<:` merges a mapping or a list of mappings, not a scalar; write `<<: *<anchor of a mapping>`"),
    ]


def test_a_folder_linked_into_the_spec_is_read_under_its_own_name(write_spec, tmp_path) -> None:
    """A symbolic link to a folder was skipped silently (a linked file was read): its entity was then
    "not declared". Read, named by the link, and a link back up the tree is not followed twice."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "entity_customer.yaml").write_text(CUSTOMER.replace("tier: {type: int}", "tier: {type: intt}"))
    root = write_spec({"entity_customer.yaml": None})
    (root / "common").symlink_to(shared, target_is_directory=True)
    (root / "again").symlink_to(root, target_is_directory=True)
    project, diagnostics, loaded = compile_spec(root)
    assert [(d.file, d.line, d.code) for d in diagnostics] == [("common/entity_customer.yaml", 8, "SPEC_INVALID")]


def test_a_folder_that_cannot_be_listed_is_said(write_spec, monkeypatch) -> None:
    """A folder the user may not list hid its documents silently. (The tests run as root, whom no
    permission stops, so the refusal is made by the listing itself.)"""
    root = write_spec({"locked/entity_more.yaml": CUSTOMER})
    listing = os.scandir

    def scandir(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return listing(path)

    monkeypatch.setattr(os, "scandir", scandir)
    project, diagnostics, loaded = compile_spec(root)
    assert [(d.file, d.line, d.code, d.message) for d in diagnostics] == [
        ("locked", 1, "SPEC_UNREADABLE", "this folder cannot be read (Permission denied), so the spec documents in it are "
         "not; make it readable or move it out of the spec directory."),
    ]


def test_a_spec_at_a_dbt_or_sqlmesh_project_root_skips_the_tools_own_files(write_spec) -> None:
    """An outside tester (session 41): with the default `specs: .` and the spec beside
    dbt_project.yml, dbt's own files were refused ("this document has no version key; start it
    with `spec_version: 1`"), so the spec could never pass."""
    tools = {"dbt_project.yml": "name: shop\nprofile: shop\n", "profiles.yml": "shop:\n  target: dev\n",
             "packages.yml": "packages: []\n"}
    assert _found(write_spec, tools) == []
    assert _found(write_spec, {"config.yaml": "gateways: {}\n", "models/x.sql": "select 1\n"}) == []
    # elsewhere, a file of such a name is a spec document like any other
    assert [d[:3] for d in _found(write_spec, {"profiles.yml": "shop:\n  target: dev\n"})] == [
        ("profiles.yml", 1, "SPEC_GRAMMAR")]


def test_a_very_long_value_is_cut_where_a_message_quotes_it(write_spec) -> None:
    """An outside tester (session 41): a 100,000-character value made one 100,126-character line."""
    found = _found(write_spec, _customer("tier: {type: int}", "tier: {type: int, classification: " + "x" * 100_000 + "}"))
    assert [f[:3] for f in found] == [("entity_customer.yaml", 8, "SPEC_GRAMMAR")]
    assert "`" + "x" * 80 + "...` (100,000 characters)" in found[0][3] and len(found[0][3]) < 300


ORDERS_MAPPING = (Path(__file__).parent.parent / "fixtures" / "specs" / "base" / "mapping_orders.yaml").read_text()


@pytest.mark.parametrize("file, old, new, line, written, reading", [
    ("mapping_orders.yaml", "transform: [lower]}", "transform: [lower, {coalesce: .inf}]}", 9, ".inf", "infinity"),
    ("mapping_orders.yaml", "transform: [lower]}", "transform: [lower, {nullif: .nan}]}", 9, ".nan", "not-a-number (NaN)"),
    ("mapping_orders.yaml", "transform: [lower]}", "transform: [lower, {nullif: .NaN}]}", 9, ".NaN", "not-a-number (NaN)"),
    ("mapping_orders.yaml", "transform: [lower]}", "transform: [lower], quality: [{rule: in_set, values: [a, -.inf], on_fail: flag}]}",
     9, "-.inf", "minus infinity"),
    ("mapping_orders.yaml", "[{to_decimal: [12, 2]}]}", "[{to_decimal: [12, 2]}], quality: [{rule: range, max: 1.0e+400, on_fail: flag}]}",
     8, "1.0e+400", "infinity"),
    ("entity_customer.yaml", "tier: {type: int}", "tier: {type: int, assert: {max: .Inf}}", 8, ".Inf", "infinity"),
    ("entity_customer.yaml", "quarantine: {retention: 30d}", "quarantine: {retention: 30d}\n    checks:\n      - {check_id: "
     "enough, kind: row_expectation, enforcement: required, min_rows: .inf}", 11, ".inf", "infinity"),
])
def test_a_number_yaml_reads_as_nan_or_infinity_is_refused_wherever_it_stands(write_spec, file, old, new, line, written,
                                                                               reading) -> None:
    """An outside tester (session 44): `nullif: .nan` and `coalesce: .inf` validated, then were written
    into the staged model as the bare words `nan` and `inf`, which dbt and SQLMesh read as columns
    (Binder Error, or a bronze column `nan` read silently). Refused at its line, wherever the spec
    takes a value (decision 1153); a check that refuses the value on its own terms may say so too."""
    text = {"mapping_orders.yaml": ORDERS_MAPPING, "entity_customer.yaml": CUSTOMER}[file]
    assert old in text
    found = _found(write_spec, {file: text.replace(old, new, 1)})
    assert (file, line, "SPEC_GRAMMAR", f"`{written}` is a number YAML reads as {reading}, which no engine takes as a "
            f"literal value; write a finite number, or quote it (`'{written}'`) if the text is meant.") in found, found


def test_a_quoted_nan_is_text(write_spec) -> None:
    """What the refusal advises is taken: the quoted `'.nan'` is the text `.nan`, written as a string."""
    from assay.lower.fields import lower_step
    from assay.spec.transforms import parse_step
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    assert _found(write_spec, {"mapping_orders.yaml": ORDERS_MAPPING.replace(
        "transform: [lower]}", "transform: [lower, {nullif: '.nan'}, {coalesce: '-.inf'}]}")}) == []
    step, _ = parse_step({"nullif": ".nan"})
    assert lower_step(SqlmeshSpelling("duckdb"), "x", step, "string", False)[0].lower() == "nullif(x, '.nan')"


def test_no_non_finite_number_is_ever_written_as_a_bare_word() -> None:
    """The loader refuses them; were one to reach the SQL writers all the same, it stops there, never
    becoming `nan`, `inf` or `Infinity`, words SQL reads as columns."""
    from assay.lower.rules import typed_literal
    from assay.targets.sqlmesh.spelling import SqlmeshSpelling

    sp = SqlmeshSpelling("duckdb")
    for value in (float("nan"), float("inf"), float("-inf")):
        with pytest.raises(ValueError, match="non-finite"):
            sp.literal(value)
        with pytest.raises(ValueError, match="non-finite"):
            typed_literal(sp, str(value), "decimal(12,2)")
    assert sp.literal(1.5) == "1.5" and typed_literal(sp, "2.50", "decimal(12,2)") == "2.50"
