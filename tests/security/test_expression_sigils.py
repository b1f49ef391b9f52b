"""An expression rule or a SQL check file writing `@`, `$1`, `$name`, `?` or `:name` outside a
string literal is refused at its line, whatever the process imported.

Where SQLMesh is imported (its test harness, `assay plan` with data, any program that uses both),
sqlglot parses `@gateway` as a SQLMesh macro variable and `@EACH(...)` as a macro call; assay
wrote them into the model and SQLMesh expanded them (`s = @gateway` became `s = 'local'`). Without
SQLMesh, DuckDB's parser reads `@x` as abs(x) and nothing binds a parameter (the build stopped,
or on dbt psycopg2 read the `%s` sqlglot wrote). A `?` or `@` inside a literal or comment is text.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import sqlmesh.core.dialect  # noqa: F401 - sqlglot as SQLMesh extends it, the case that expanded macros

from assay.spec.loader import load_spec
from assay.validate import validate

SPEC = """spec_version: 1
entities:
  thing:
    grain: g
    key: [id]
    fields:
      id: {{type: string, required: true}}
      gateway: {{type: string}}
    quality:
      - {{rule: expression, name: e, expr: {expr}, on_fail: flag}}
    quarantine: {{retention: 7d}}
"""
MAPPING = """mapping_version: 1
source: raw_things
target: thing
key: {id: {from: "$.id"}}
fields:
  gateway: {from: "$.g"}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
"""
SIGILS = ["id = @gateway", "@EACH(['a'], v -> id <> v)", "id <> @assay_whatever()", "id <> @{gateway}",
          "id <> $1", "id <> ?", "id <> :name", "id <> $name"]


def write(root, expr: str, check_where: str = "id <> '@x?'") -> None:
    (root / "assay.yml").write_text("name: p\nspecs: .\n", encoding="utf-8")
    (root / "spec.yaml").write_text(SPEC.format(expr=json.dumps(expr)), encoding="utf-8")
    (root / "mapping.yaml").write_text(MAPPING, encoding="utf-8")
    (root / "checks" / "silver" / "thing").mkdir(parents=True)
    (root / "checks" / "silver" / "thing" / "c.sql").write_text(
        f"/* assay\non_failure: warn\n*/\nselect * from silver.thing\nwhere {check_where} -- @x ?\n", encoding="utf-8")


def errors(root, target: str) -> list[tuple[str, int]]:
    return sorted((d.file.split("/")[-1], d.line) for d in validate(load_spec(root), target=target).diagnostics
                  if d.severity == "error" and "outside a string literal" in d.message)


@pytest.mark.parametrize("target", ["dbt", "sqlmesh"])
@pytest.mark.parametrize("sigil", SIGILS)
def test_a_sigil_is_refused_at_its_line(tmp_path, sigil, target):
    write(tmp_path, sigil, check_where=sigil.replace("id", "gateway", 1) if sigil.startswith("id") else sigil)
    assert errors(tmp_path, target) == [("c.sql", 5), ("spec.yaml", 10)]


def test_text_in_literals_and_comments_is_no_sigil(tmp_path):
    write(tmp_path, "id <> '@gateway ? $1 :n' /* @EACH */")
    assert validate(load_spec(tmp_path), target="sqlmesh").ok


def test_the_verdict_does_not_depend_on_sqlmesh_being_imported(tmp_path):
    """The same refusals in a process that never imported SQLMesh (as `assay validate` runs)."""
    write(tmp_path, "id <> @assay_whatever()", check_where="gateway <> @gateway")
    code = ("import sys; from assay.spec.loader import load_spec; from assay.validate import validate\n"
            "ds = validate(load_spec(sys.argv[1]), target='sqlmesh').diagnostics\n"
            "assert 'sqlmesh' not in sys.modules\n"
            "print(sorted((d.file.split('/')[-1], d.line) for d in ds if 'outside a string literal' in d.message))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[('c.sql', 5), ('spec.yaml', 10)]"
