"""Names the targets build from the spec's names stay within PostgreSQL's 63 characters (an
outside tester, session 41): a 62-character entity validated and dbt then refused
`<entity>__staged`; a 55-character field's two `range` rule columns were cut to one name; a
45-character entity planned on SQLMesh into a 73-character physical table name."""

from __future__ import annotations

from pathlib import Path

from assay.ir.resolve import compile_spec

BASE = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "base"


def _renamed(old: str, new: str) -> dict:
    files = {}
    for name in ("entity_orders.yaml", "mapping_orders.yaml", "entity_customer.yaml"):
        text = (BASE / name).read_text(encoding="utf-8")
        files[name] = text.replace(f"{old}:", f"{new}:").replace(f"target: {old}", f"target: {new}").replace(
            f"from: {old},", f"from: {new},")
    return files


def _errors(write_spec, files: dict, **kw) -> list:
    _project, diagnostics, _loaded = compile_spec(write_spec(files), **kw)
    return [(d.file, d.line, d.code, d.message) for d in diagnostics if d.severity == "error"]


def test_an_entity_whose_relations_pass_63_characters_is_refused(write_spec):
    long = "orders_" + "x" * 49  # 56 characters: `__reject`, `__staged` make 64
    (found,) = _errors(write_spec, _renamed("orders", long))
    assert found[:3] == ("entity_orders.yaml", 3, "SPEC_INVALID")
    assert f"names a relation `{long}__staged` of 64 characters, over the 63" in found[3]
    assert "shorten the entity's name to at most 55 characters" in found[3]
    assert _errors(write_spec, _renamed("orders", long[:-1])) == []


def test_rule_columns_that_pass_63_characters_are_refused(write_spec):
    field = "amount_" + "z" * 48  # 55 characters: `_r__<field>_range_min` is 69
    files = _renamed("amount", field)
    files["mapping_orders.yaml"] = files["mapping_orders.yaml"].replace(
        "transform: [{to_decimal: [12, 2]}]}",
        "transform: [{to_decimal: [12, 2]}], quality: [{rule: range, min: 0, on_fail: flag}, "
        "{rule: range, max: 10, on_fail: flag}]}")
    found = _errors(write_spec, files)
    said = sorted(f[3].split("`")[1] for f in found)
    assert said == [f"{field}_coercible", f"{field}_range_max", f"{field}_range_min"], found
    assert all("over the 63 characters PostgreSQL allows" in f[3] and "at most 59 characters" in f[3] for f in found), found


def test_sqlmesh_physical_names_on_postgres(write_spec):
    long = "orders_" + "y" * 20  # 27: gold__mart_data_quality__<entity>__<10 digits> is 64
    found = _errors(write_spec, _renamed("orders", long), target="sqlmesh", dialect="postgres")
    assert [f[:3] for f in found] == [("entity_orders.yaml", 3, "UNSUPPORTED_BY_TARGET")]
    assert f"`gold__mart_data_quality__{long}__<fingerprint>`, up to 64 characters; at most 26" in found[0][3]
    # the same spec on DuckDB (no such limit) and one character shorter on PostgreSQL are fine
    assert _errors(write_spec, _renamed("orders", long), target="sqlmesh", dialect="duckdb") == []
    assert _errors(write_spec, _renamed("orders", long[:-1]), target="sqlmesh", dialect="postgres") == []
