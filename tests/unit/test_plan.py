"""`assay plan`: change classification, replay_scope (parents first) and backfill_scope."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from assay.api import load_project
from assay.cli.main import cli
from assay.plan import BREAKING, NON_BREAKING, RESTATING, parents_first, plan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def _copy(tmp_path: Path, name: str) -> Path:
    dst = tmp_path / name
    shutil.copytree(EXAMPLE, dst)
    return dst


def _edit(spec: Path, rel: str, old: str, new: str) -> None:
    p = spec / rel
    text = p.read_text()
    assert old in text, old
    p.write_text(text.replace(old, new))


def test_no_change_is_an_empty_plan():
    p = plan(load_project(EXAMPLE), load_project(EXAMPLE))
    assert p.changes == () and p.replay_scope == () and p.backfill_scope == ()


def test_an_on_missing_change_is_said_as_written(tmp_path):
    # `unknown_member -> quarantine` read `flag -> quarantine`, and `unknown_member -> flag` (which
    # stops the key rewrite) only `rule_changed` (an outside tester, session 42)
    old = "{rule: referential, via: order_of_customer, on_missing: unknown_member}"
    for to in ("quarantine", "flag"):
        new = _copy(tmp_path, to)
        _edit(new, "spec/entities.yml", old, old.replace("unknown_member", to))
        p = plan(load_project(EXAMPLE), load_project(new))
        assert [(c.entity, c.kind, c.detail, c.classification) for c in p.changes] == [
            ("order", "disposition_changed", f"order_of_customer_referential: unknown_member -> {to}", RESTATING)]


def test_relaxing_a_disposition_restates_and_reaches_soft_children(tmp_path):
    new = _copy(tmp_path, "new")
    # customer.tier range: quarantine -> flag frees rows sitting in the reject table
    _edit(new, "spec/customers.yml", "{rule: range, min: 1, max: 3, on_fail: quarantine}", "{rule: range, min: 1, max: 3, on_fail: flag}")
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [("customer", "disposition_changed", RESTATING)]
    assert p.changes[0].detail == "tier_range: quarantine -> flag"
    assert p.replay_scope == ("customer",)
    # order reads customer through unknown_member: its bronze rows are rebuilt, not replayed
    assert p.backfill_scope == ("customer", "order")


def test_transform_and_metadata_changes(tmp_path):
    new = _copy(tmp_path, "new")
    _edit(new, "spec/orders.yml", "transform: [{to_decimal: [12, 2]}]", "transform: [trim, {to_decimal: [12, 2]}]")
    _edit(new, "spec/entities.yml", "owner: finance-data", "owner: finance")
    p = plan(load_project(EXAMPLE), load_project(new))
    kinds = {(c.entity, c.kind): c.classification for c in p.changes}
    assert kinds == {("order", "mappings_changed"): BREAKING, ("order", "metadata_changed"): NON_BREAKING}
    assert [c.detail for c in p.changes if c.kind == "metadata_changed"] == ["owner"]
    # the quarantined orders were judged on the old values: replayed (decision 0999)
    assert p.replay_scope == ("order",) and p.backfill_scope == ("order",)


def test_a_widened_enum_map_replays_the_entity_and_rebuilds_its_soft_children(tmp_path):
    """An outside tester (session 36): widening an `enum_map` that a quarantine rule checks frees
    rows held in the reject table, but the plan said `replay_scope: (none)`; a row aged out of
    bronze stayed quarantined for good. Decision 0999: a value change of an entity with a reject
    table puts it in replay_scope, and its unknown_member children in backfill_scope."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/customers.yml", "    transform: [trim, upper]\n    quality:\n      - {rule: length, min: 2",
          "    transform: [trim, upper, {enum_map: [UK, GB]}]\n    quality:\n      - {rule: length, min: 2")
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [("customer", "mappings_changed", BREAKING)]
    assert p.replay_scope == ("customer",)
    # order reads customer through unknown_member: rebuilt against the customers that come back
    assert p.backfill_scope == ("customer", "order")


def test_a_value_change_of_an_entity_without_a_reject_table_is_a_backfill_only(tmp_path):
    kitchen = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "kitchen_sink"
    old, new = tmp_path / "old", tmp_path / "new"
    shutil.copytree(kitchen, old)
    shutil.copytree(kitchen, new)
    _edit(new, "m_plain.yml", "transform: [to_int]", "transform: [trim, to_int]")
    p = plan(load_project(old), load_project(new))
    assert [(c.entity, c.kind) for c in p.changes] == [("plain", "mappings_changed")]
    assert p.replay_scope == () and p.backfill_scope == ("plain",)


def test_where_a_mapping_is_written_is_no_change(tmp_path):
    """A comment above a mapping, or its fields in another order, moves lines and changes no value."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/orders.yml", "mapping_version: 1", "# orders from the shop's export\n\nmapping_version: 1")
    customer_line = '  customer_id: {from: "$.customer", transform: [trim, upper]}\n'
    _edit(new, "spec/orders.yml", customer_line, "")
    # the field moves to the end of the fields block (just before `unmapped:`)
    lines = (new / "spec/orders.yml").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("unmapped:"))
    (new / "spec/orders.yml").write_text("".join(lines[:at] + [customer_line] + lines[at:]))
    p = plan(load_project(EXAMPLE), load_project(new))
    assert p.changes == () and p.backfill_scope == ()


def test_freshness_and_unmapped_are_declarations(tmp_path):
    """A freshness threshold or an acknowledged column changes no row: nothing to rebuild."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/orders.yml", "freshness: {warn_after: 6h, error_after: 1d}", "freshness: {warn_after: 8h, error_after: 2d}")
    _edit(new, "spec/customers.yml", '"$.phone"]', '"$.phone", "$.fax"]')
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [
        ("customer", "source_declaration_changed", NON_BREAKING), ("order", "source_declaration_changed", NON_BREAKING)]
    assert p.replay_scope == () and p.backfill_scope == ()


def test_a_fields_declarations_are_metadata_and_materialization_rebuilds(tmp_path):
    """A field's description, classification or assert changes no value; a switch to incremental
    needs the staged table rebuilt (docs/incremental.md)."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", "      status: {type: string}", "      status: {type: string, description: state, classification: pii}")
    _edit(new, "spec/entities.yml", '      discount: {type: "decimal(12,2)"}', '      discount: {type: "decimal(12,2)", assert: {min: 0}}')
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [("order", "metadata_changed", NON_BREAKING)]
    # what changed is named (an outside tester, session 37: the line listed every kind of metadata)
    assert p.changes[0].detail == "assert of discount, description of status, classification of status"
    assert p.backfill_scope == ()
    _edit(new, "spec/entities.yml", "    owner: finance-data\n", "    owner: finance-data\n    materialized: incremental\n")
    p = plan(load_project(EXAMPLE), load_project(new))
    assert ("order", "materialization_changed", BREAKING, "table -> incremental") in [
        (c.entity, c.kind, c.classification, c.detail) for c in p.changes]
    assert p.backfill_scope == ("order",)


def test_an_expression_respaced_is_no_change(tmp_path):
    new = _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", 'expr: "discount <= amount"', 'expr: "discount   <=\\n amount"')
    assert plan(load_project(EXAMPLE), load_project(new)).changes == ()
    _edit(new, "spec/entities.yml", 'expr: "discount   <=\\n amount"', 'expr: "discount < amount"')
    assert [c.kind for c in plan(load_project(EXAMPLE), load_project(new)).changes] == ["rule_changed"]


ENTITIES = """spec_version: 1
entities:
{entities}
relationships:
{relationships}
"""


def _spec(root: Path, edges: list[tuple[str, str, str]], in_set: dict[str, str]) -> Path:
    """Entities a..e, each with one mapping and an in_set rule; edges (child, parent, on_missing)."""
    root.mkdir(parents=True)
    names = sorted({n for e in edges for n in e[:2]} | set(in_set))
    ents, rels = [], []
    for n in names:
        quality = [f"{{rule: referential, via: {c}_{p}, on_missing: {m}}}" for c, p, m in edges if c == n]
        ents.append(
            f"  {n}:\n    grain: one row per id\n    key: [id]\n    fields: {{id: {{type: string}}, ref: {{type: string}}, code: {{type: string}}}}\n"
            f"    quarantine: {{retention: 7d}}\n    quality: [{', '.join(quality)}]"
        )
        (root / f"m_{n}.yml").write_text(
            f"mapping_version: 1\nsource: raw_{n}\ntarget: {n}\nkey: {{id: {{from: \"$.id\"}}}}\n"
            f"fields:\n  ref: {{from: \"$.ref\"}}\n  code: {{from: \"$.code\", quality: [{{rule: in_set, values: [{in_set.get(n, 'A')}], on_fail: quarantine}}]}}\n"
            "unmapped: [\"$._load_id\", \"$._ingested_at\", \"$._source_row_id\"]\n"
        )
    for c, p, _m in edges:
        rels.append(f"  - {{name: {c}_{p}, from: {c}, to: {p}, via: {{ref: id}}}}")
    (root / "entities.yml").write_text(ENTITIES.format(entities="\n".join(ents), relationships="\n".join(rels) or "  []"))
    return root


def test_quarantine_chains_are_replayed_parents_first_and_cycles_break_at_the_first_name(tmp_path):
    edges = [("b", "a", "quarantine"), ("c", "b", "quarantine"), ("d", "c", "quarantine"), ("c", "d", "quarantine"), ("e", "b", "flag")]
    old = _spec(tmp_path / "old", edges, {})
    new = _spec(tmp_path / "new", edges, {"a": "B"})
    p = plan(load_project(old), load_project(new))
    assert [(c.entity, c.kind) for c in p.changes] == [("a", "rule_changed")]
    # a, then b (its child), then the c<->d cycle broken at c
    assert p.replay_scope == ("a", "b", "c", "d")
    # e reads b through a flag rule: backfilled, not replayed
    assert p.backfill_scope == ("a", "e")


def test_parents_first_ties_by_name():
    edges = {"p": {"x", "y"}, "y": {"z"}}
    assert parents_first({"z", "y", "x", "p"}, edges) == ("p", "x", "y", "z")


def test_cli_plan(tmp_path):
    new = _copy(tmp_path, "new")
    _edit(new, "spec/customers.yml", "{rule: range, min: 1, max: 3, on_fail: quarantine}", "{rule: range, min: 1, max: 3, on_fail: flag}")
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), str(new)])
    assert res.exit_code == 0, res.output
    assert "RESTATING    customer: disposition_changed tier_range: quarantine -> flag" in res.output
    assert "replay_scope: customer" in res.output and "backfill_scope: customer, order" in res.output
    res = CliRunner().invoke(cli, ["plan", str(EXAMPLE), str(new), "--json"])
    assert json.loads(res.output)["replay_scope"] == ["customer"]


def test_a_cycle_is_broken_before_its_children_and_after_its_parents():
    # xx <-> yy, kid a child of xx, root a parent of yy: the cycle is broken at its first member
    # by name (xx) once root is done, and kid comes after xx, not first by its name (issue 26 probe)
    edges = {"xx": {"yy", "kid"}, "yy": {"xx"}, "root": {"yy"}}
    assert parents_first({"kid", "xx", "yy"}, edges) == ("xx", "kid", "yy")
    assert parents_first({"root", "kid", "xx", "yy"}, edges) == ("root", "xx", "kid", "yy")


def test_a_moved_schema_and_the_other_settings_are_changes_of_assay_yml(tmp_path):
    """Decision 0997: a plan between two specs whose assay.yml moved the silver schema said "No
    changes", where the next build writes every entity, staged and reject table elsewhere."""
    new = _copy(tmp_path, "new")
    _edit(new, "assay.yml", "silver: silver", "silver: silver_v2")
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [("assay.yml", "schema_changed", BREAKING)]
    assert p.changes[0].detail.startswith("silver: silver -> silver_v2 (every entity, its staged and reject tables are built "
                                          "in the new schema; the old schema's tables, their reject history included")
    assert p.backfill_scope == ("customer", "order") and p.replay_scope == ()
    # the quality history's and the results' schemas move no entity row; budgets and the clock neither
    again = _copy(tmp_path, "again")
    _edit(again, "assay.yml", "meta: assay_meta", "meta: assay_meta_v2")
    settings = again / "assay.yml"
    settings.write_text(settings.read_text() + "dbt: {snapshot_clock: project}\n")
    _edit(again, "assay.yml", "checks:\n", "checks:\n  time_budget_seconds: 60\n")
    p = plan(load_project(EXAMPLE), load_project(again))
    assert [(c.entity, c.kind, c.classification) for c in p.changes] == [
        ("assay.yml", "schema_changed", NON_BREAKING), ("assay.yml", "check_budget_changed", NON_BREAKING),
        ("assay.yml", "snapshot_clock_changed", NON_BREAKING)]
    assert p.backfill_scope == () and p.replay_scope == ()


def test_data_of_a_plan_that_moves_a_schema_is_refused_with_the_reason(tmp_path):
    """`--data` compared the next build, read in the new schema, with nothing there, and said to run
    `dbt build` with the deployed spec first, which the user had done (decision 0997)."""
    project = tmp_path / "shop"
    assert CliRunner().invoke(cli, ["init", str(project)]).exit_code == 0
    deployed = _copy(tmp_path, "deployed")
    _edit(project, "assay.yml", "silver: silver", "silver: silver_v2")
    result = CliRunner().invoke(cli, ["plan", str(deployed), "--spec", str(project), "--project", str(project), "--data"])
    assert result.exit_code == 3, result.output
    assert ("the new spec moves a schema (silver: silver -> silver_v2), so its next build starts from nothing there and "
            "every entity is built anew") in result.stderr
    assert "Traceback" not in result.output


def test_a_field_added_is_no_change_of_metadata(tmp_path):
    """Adding a field changed the list of every field's metadata, so the plan also said
    `NON_BREAKING metadata_changed` (an outside tester, session 37): no other field's changed."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", "      status: {type: string}", "      status: {type: string}\n      channel: {type: string}")
    p = plan(load_project(EXAMPLE), load_project(new))
    assert "metadata_changed" not in [c.kind for c in p.changes], p.changes


def test_a_mapping_file_renamed_changes_no_rule_name(tmp_path):
    """Two mappings of one entity that cast the same field both generate `tier_coercible`; the
    second is `tier_coercible_2`. Which one was second followed the files' order, so renaming a
    file renamed the rules and the plan asked for a replay (an outside tester, session 37). It
    follows the mappings' names (decision 0959): the rename is no change."""
    base = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "base"
    old = tmp_path / "old"
    shutil.copytree(base, old)
    second = (old / "mapping_customer.yaml").read_text().replace("source: raw_customers", "name: a_crm\nsource: raw_crm")
    (old / "z_crm.yaml").write_text(second)
    before = load_project(old)
    names = {r.name: r.mapping for r in before.entity("customer").rules if r.column == "tier"}
    assert names == {"tier_coercible": "a_crm", "tier_coercible_2": "raw_customers"}, names
    new = tmp_path / "new"
    shutil.copytree(old, new)
    (new / "z_crm.yaml").rename(new / "a_crm.yaml")
    (new / "mapping_customer.yaml").rename(new / "z_customer.yaml")
    assert plan(before, load_project(new)).changes == ()


def test_a_field_type_changed_is_a_field_change_not_a_mapping_change(tmp_path):
    """An outside tester (session 41): a field's type changed in the entity, the mapping files
    untouched, and the plan also said `mappings_changed`. The replay is the same (both revalue)."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", '      discount: {type: "decimal(12,2)"}', '      discount: {type: "decimal(14,2)"}')
    p = plan(load_project(EXAMPLE), load_project(new))
    assert [(c.entity, c.kind) for c in p.changes] == [("order", "fields_changed")], p.changes
    assert "order" in p.replay_scope


def test_fields_changed_names_each_field_and_a_type2_entitys_new_versions(tmp_path):
    """An outside tester (session 49) read `fields_changed columns or their types` for a field added to
    a type-2 entity: which field, and that every current key gets a new version at the next build
    (docs/sqlmesh.md), went unsaid."""
    new = _copy(tmp_path, "new")
    _edit(new, "spec/entities.yml", "      signup_date: {type: date}",
          "      signup_date: {type: date}\n      region: {type: string}")
    _edit(new, "spec/entities.yml", "      tier: {type: int}", "      tier: {type: \"decimal(4,1)\"}")
    _edit(new, "spec/customers.yml", "  signup_date:\n", "  region:\n    from: \"$.region\"\n  signup_date:\n")
    _edit(new, "spec/entities.yml", "      status: {type: string}\n", "")
    status = (Path(new) / "spec/orders.yml").read_text().split("  status:\n")[1].split("  amount:")[0]
    _edit(new, "spec/orders.yml", "  status:\n" + status, "")
    got = {c.entity: c.detail for c in plan(load_project(EXAMPLE), load_project(new)).changes if c.kind == "fields_changed"}
    assert got["customer"] == ("added region (string); tier: int -> decimal(4,1); the next build opens a new version of "
                               "every current key (a column the history has not stored is a change of every row)"), got
    assert got["order"] == "removed status", got
