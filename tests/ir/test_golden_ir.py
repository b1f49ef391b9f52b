"""The resolved IR of the two corpus specs, compared byte for byte with tests/golden/ir/.

Targets emit from this IR, so a change here changes every generated project; the
golden diff is where a reviewer sees it. `ASSAY_UPDATE_GOLDEN=1` rewrites the files.
Beside the byte comparison, the rules the golden holds are checked against the
contract (DESIGN.md section 2, reference 001), so a wrong golden cannot be blessed
by regenerating it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from assay.ir.model import dump
from assay.ir.resolve import compile_spec
from tests.support.corpus import CORPUS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "ir"
SPECS = {"dirty": CORPUS / "dirty" / "spec", "precedence": CORPUS / "precedence" / "spec"}


def render(project) -> str:
    return json.dumps(dump(project), sort_keys=True, indent=2) + "\n"


@pytest.fixture(scope="module")
def projects() -> dict:
    out = {}
    for name, spec in SPECS.items():
        project, diagnostics, _loaded = compile_spec(spec)
        assert diagnostics == [], name
        out[name] = project
    return out


@pytest.mark.parametrize("name", sorted(SPECS))
def test_resolved_ir_matches_the_golden_file(projects, name: str) -> None:
    text = render(projects[name])
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("ASSAY_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_bytes(text.encode("utf-8"))
    assert golden.read_bytes() == text.encode("utf-8"), f"{golden} differs; rerun with ASSAY_UPDATE_GOLDEN=1 and review the diff"


@pytest.mark.parametrize("name", sorted(SPECS))
def test_golden_holds_no_absolute_path(name: str) -> None:
    text = (GOLDEN / f"{name}.json").read_text(encoding="utf-8")
    strings = []

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str):
            strings.append(node)

    walk(json.loads(text))
    assert str(CORPUS) not in text
    assert not [s for s in strings if s.startswith("/") or s[1:3] == ":\\"]


def _rules(project, entity: str) -> dict:
    return {r.name: r for r in project.entity(entity).rules}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_mapped_field_of_an_opted_in_entity_has_its_coercible_rule(projects, name: str) -> None:
    # 001: implicit coercible on every mapped field of an opted-in entity, at quarantine,
    # at fail on the columns the dedupe order reads, whatever the chain (nullif and
    # regex_extract included, decision 0019); a stated coercible replaces it.
    for entity in projects[name].entities:
        assert entity.opted_in
        order = {k.column for k in entity.dedupe if not k.metadata}
        rules = _rules(projects[name], entity.name)
        for mapping in entity.mappings:
            for source in mapping.fields:
                coercible = rules.get(f"{source.column}_coercible")
                assert coercible is not None, (entity.name, source.column)
                if coercible.implicit:
                    assert coercible.disposition == ("fail" if source.column in order else "quarantine")
                    assert coercible.mapping == mapping.name
        assert list(rules) == sorted(rules), entity.name


def test_dirty_key_dedupes_on_metadata_only_so_no_rule_is_forced_to_fail(projects) -> None:
    key = projects["dirty"].entity("dirty_key")
    assert [(k.column, k.metadata) for k in key.dedupe] == [("_ingested_at", True), ("_load_id", True), ("_source_row_id", True), ("_mapping", True)]
    assert {r.name: (r.kind, r.disposition, r.implicit) for r in key.rules} == {
        "amount_coercible": ("coercible", "quarantine", True),
        "amount_range_min": ("range", "quarantine", False),
        "line_no_coercible": ("coercible", "quarantine", True),
        "line_no_present": ("expression", "quarantine", False),
        "order_id_coercible": ("coercible", "quarantine", True),
        "order_id_not_empty": ("expression", "quarantine", False),
        "order_id_present": ("expression", "quarantine", False),
    }
    assert key.rules[1].params == (("min", "0"),)
    assert key.retention == "90d"


def test_dirty_name_single_bound_lengths_and_charset_ranges(projects) -> None:
    rules = _rules(projects["dirty"], "dirty_name")
    assert sorted(rules) == [
        "case_name_coercible",
        "name_charset",
        "name_coercible",
        "name_length_max",
        "name_length_min",
        "name_normalize",
        "name_pattern",
        "name_unique",
    ]
    assert rules["name_length_min"].params == (("min", 1),)
    assert rules["name_length_max"].params == (("max", 12),)
    charset = dict(rules["name_charset"].params)
    assert charset["mode"] == "forbid"
    assert charset["ranges"][:3] == ((0x09, 0x09), (0xA0, 0xA0), (0xAD, 0xAD))
    assert (0x0400, 0x04FF) in charset["ranges"]
    assert rules["name_pattern"].disposition == "quarantine"


def test_a_stated_coercible_replaces_the_implicit_one(projects) -> None:
    number = _rules(projects["dirty"], "dirty_number")
    assert (number["amount_coercible"].implicit, number["amount_coercible"].disposition) == (False, "quarantine")
    dup = _rules(projects["precedence"], "q_dup")
    assert (dup["note_coercible"].implicit, dup["note_coercible"].disposition) == (False, "fail")
    assert not [n for n in list(number) + list(dup) if n.endswith("_coercible_2")]


def test_referential_rules_are_named_after_their_relationship(projects) -> None:
    ref = _rules(projects["dirty"], "dirty_ref")
    routed = _rules(projects["dirty"], "dirty_ref_routed")
    got = {
        name: (rule.disposition, rule.param("on_missing"), rule.param("parent"), rule.param("columns"))
        for rules in (ref, routed)
        for name, rule in rules.items()
        if rule.kind == "referential"
    }
    assert got == {
        "ref_of_customer_referential": ("flag", "unknown_member", "dirty_customer", (("customer_ref", "customer_id"),)),
        "ref_of_parent_referential": ("flag", "unknown_member", "dirty_ref_parent", (("parent_ref", "order_id"),)),
        "routed_of_customer_referential": ("quarantine", "quarantine", "dirty_customer", (("customer_ref", "customer_id"),)),
        "routed_of_parent_referential": ("flag", "flag", "dirty_ref_parent", (("parent_ref", "order_id"),)),
    }
    assert (routed["amount_not_null"].disposition, routed["amount_not_null"].mapping) == ("fail", "dirty__refs")


def test_both_bounds_and_enum_targets(projects) -> None:
    text = _rules(projects["dirty"], "dirty_text_extreme")
    assert text["value_length"].params == (("max", 255), ("min", 1))
    status = _rules(projects["dirty"], "dirty_status")
    assert status["status_in_enum"].params == (("values", ("paid", "pending", "refunded")),)
    assert status["status_text_in_set"].params == (("values", ("paid", "pending", "refunded")),)


def test_precedence_dispositions(projects) -> None:
    line = _rules(projects["precedence"], "q_line")
    assert (line["amount_range_min"].disposition, line["code_unique"].disposition) == ("fail", "quarantine")
    code = _rules(projects["precedence"], "q_code")
    assert {n: r.disposition for n, r in code.items() if r.kind == "unique"} == {
        "code_fail_unique": "fail",
        "code_flag_unique": "flag",
        "code_quar_unique": "quarantine",
    }
    [blocking] = [r for r in projects["precedence"].reconcile if r.on_fail == "fail"]
    assert (blocking.left.agg, blocking.left.by, blocking.right.agg, blocking.right.by) == ("sum", ("order_id", "line_no"), None, ("order_id", "line_no"))
    assert blocking.tolerance == "0.000000001"
