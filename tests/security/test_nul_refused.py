"""A NUL (U+0000) in spec text is refused where it is written, with file and line: no engine
takes it in a SQL literal (PostgreSQL text cannot hold it; DuckDB's parser stops the statement at
it, so a generated project that carried one failed to build). YAML forbids a raw NUL, but its
escapes `\\0` and `\\u0000` wrote one into any value; a SQL check file may hold one raw."""

from __future__ import annotations

import pytest

from assay.spec.loader import load_spec
from assay.validate import validate

ENTITY = """spec_version: 1
entities:
  thing:
    grain: {grain}
    key: [id]
    fields:
      id: {{type: string, required: true}}
      s: {{type: string}}
    quarantine: {{retention: 7d}}
"""
MAPPING = """mapping_version: 1
source: raw_things
target: thing
key: {{id: {{from: "$.id"}}}}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
fields:
  s:
    from: "$.s"
    transform: [{{concat: "ok"}}]
    quality: [{{rule: in_set, values: ["a", {member}], on_fail: flag}}]
"""
CHECK = "/* assay\non_failure: warn\ndescription: {description}\n*/\nselect * from silver.thing\nwhere s = {literal}\n"


def write(root, grain="g", member='"b"', description="d", literal="'x'") -> None:
    (root / "assay.yml").write_text("name: p\nspecs: .\n", encoding="utf-8")
    (root / "e.yaml").write_text(ENTITY.format(grain=grain), encoding="utf-8")
    (root / "m.yaml").write_text(MAPPING.format(member=member), encoding="utf-8")
    (root / "checks" / "silver" / "thing").mkdir(parents=True)
    (root / "checks" / "silver" / "thing" / "c.sql").write_text(CHECK.format(description=description, literal=literal), encoding="utf-8")


def refusals(root) -> list[tuple[str, int]]:
    validated = validate(load_spec(root), target="sqlmesh")
    assert not validated.ok
    for d in validated.diagnostics:
        assert "U+0000" in d.message and "\n" not in d.render(), d.render()
    return sorted((d.file.split("/")[-1], d.line) for d in validated.diagnostics)


def test_a_clean_spec_validates(tmp_path):
    write(tmp_path)
    assert validate(load_spec(tmp_path), target="sqlmesh").ok


@pytest.mark.parametrize("escape", ["\\0", "\\u0000", "\\x00"])
def test_a_nul_escape_in_yaml_is_refused_at_its_line(tmp_path, escape):
    write(tmp_path, grain=f'"g{escape}"', member=f'"b{escape}c"', description=f'"d{escape}"')
    assert refusals(tmp_path) == [("c.sql", 3), ("e.yaml", 4), ("m.yaml", 10)]


def test_a_raw_nul_in_a_check_file_is_refused_at_its_line(tmp_path):
    write(tmp_path, literal="'a\x00b'")
    assert refusals(tmp_path) == [("c.sql", 6)]
