"""Issue 21: every name position refuses a name that is not an identifier, with file:line.

Names reach SQL as identifiers (schemas, entities, fields, grantees, bronze relations, declared
tables and their columns, check columns, check file paths); a name holding a quote, a Jinja or
SQLMesh opener, `;`, `%`, `?`, `$$`, a newline (also a trailing one, which `re.match` with `$`
accepted) or a non-ASCII letter is refused by `assay validate`, every one at once, each at its
own file and line, and the project is not generated.
"""

from __future__ import annotations

import json
import shutil

import pytest

from assay.spec.loader import load_spec
from assay.validate import validate
from tests.security.payloads import TOKENS

BAD_NAMES = [f"a{t}b" for t in TOKENS] + ["ab\n", "commandé", "x" * 64, "1a"]


def y(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def write_project(root, bad: str) -> None:
    """A project whose every name position holds a variant of `bad` (one per position)."""
    n = {k: bad.replace("a", k, 1) if bad.startswith("a") else k + "_" + bad for k in
         ("bronze", "silver", "gold", "meta", "entity", "field", "grantee", "source", "column", "table", "tcolumn", "tgrain", "tcheck", "file")}
    if not bad.startswith("a"):  # a name that is bad on its own (too long, a leading digit, non-ASCII)
        n = dict.fromkeys(n, bad)
    (root / "spec").mkdir(parents=True)
    (root / "assay.yml").write_text(
        "name: sec\nspecs: spec\nschemas:\n"
        f"  bronze: {y(n['bronze'])}\n  silver: {y(n['silver'])}\n  gold: {y(n['gold'])}\n  meta: {y(n['meta'])}\n",
        encoding="utf-8",
    )
    (root / "spec" / "entities.yaml").write_text(
        "spec_version: 1\n"
        "entities:\n"
        f"  {y(n['entity'])}:\n"
        "    grain: one row per thing\n"
        "    key: [id]\n"
        f"    grants: {{select: [{y(n['grantee'])}]}}\n"
        "    fields:\n"
        "      id: {type: string}\n"
        f"      {y(n['field'])}: {{type: string}}\n"
        "    checks:\n"
        "      - check_id: c1\n"
        "        kind: null_ceiling\n"
        "        enforcement: advisory\n"
        f"        columns: [{y(n['column'])}]\n"
        "        max_null_ppm: 0\n",
        encoding="utf-8",
    )
    (root / "spec" / "mapping.yaml").write_text(
        "mapping_version: 1\n"
        f"source: {y(n['source'])}\n"
        f"target: {y(n['entity'])}\n"
        "key:\n"
        "  id: {from: \"$.id\"}\n"
        "unmapped: [\"$._load_id\", \"$._ingested_at\", \"$._source_row_id\"]\n",
        encoding="utf-8",
    )
    (root / "spec" / "tables.yaml").write_text(
        "tables_version: 1\n"
        "tables:\n"
        f"  {y('bronze.' + n['table'])}:\n"
        f"    columns: [{y(n['tcolumn'])}, {y(n['tcheck'])}]\n"
        f"    grain: [{y(n['tgrain'])}]\n"
        "    checks:\n"
        "      - check_id: c2\n"
        "        kind: null_ceiling\n"
        "        enforcement: advisory\n"
        f"        columns: [{y(n['tcheck'])}]\n"
        "        max_null_ppm: 0\n",
        encoding="utf-8",
    )
    check_dir = root / "checks" / "bronze" / "things"
    check_dir.mkdir(parents=True)
    (check_dir / f"{n['file']}.sql").write_text("-- assay:check\n-- on_failure: warn\nselect * from bronze.things where 1 = 0\n", encoding="utf-8")


# (file, line) of each position; the entity and field names are checked where they are named.
WHERE = {
    "bronze": ("assay.yml", 4), "silver": ("assay.yml", 5), "gold": ("assay.yml", 6), "meta": ("assay.yml", 7),
    "grantee": ("entities.yaml", 6), "column": ("entities.yaml", 14), "source": ("mapping.yaml", 2),
    "tcolumn": ("tables.yaml", 4), "tgrain": ("tables.yaml", 5), "tcheck": ("tables.yaml", 10),
}


@pytest.mark.parametrize("bad", BAD_NAMES, ids=[json.dumps(b) for b in BAD_NAMES])
def test_every_name_position_is_refused_with_file_and_line(tmp_path, bad):
    write_project(tmp_path, bad)
    validated = validate(load_spec(tmp_path), target="dbt")
    assert not validated.ok
    found = {(d.file.split("/")[-1], d.line) for d in validated.diagnostics if d.severity == "error"}
    for position, where in WHERE.items():
        assert where in found, (position, where, sorted(found))
    # The entity and field names, the declared table and the check file path too.
    assert any(d.file.endswith("entities.yaml") and d.line == 3 and "entity name" in d.message for d in validated.diagnostics)
    assert any(d.file.endswith("entities.yaml") and d.line == 9 and "field" in d.message for d in validated.diagnostics)
    assert ("tables.yaml", 3) in found
    assert any(d.code == "SQL_CHECK_INVALID" and "not a plain name" in d.message for d in validated.diagnostics)
    for d in validated.diagnostics:
        assert "\n" not in d.render(), d.render()  # one line each, whatever the name holds


def test_a_refused_project_is_not_generated(tmp_path):
    from assay.api import generate_dbt_project
    from assay.errors import SpecError

    write_project(tmp_path / "src", 'a"b')
    with pytest.raises(SpecError) as refused:
        generate_dbt_project(tmp_path / "src", tmp_path / "out")
    assert len(refused.value.diagnostics) >= len(WHERE)
    assert not (tmp_path / "out" / "models").exists()


def test_sqlmesh_refuses_names_it_would_write_unquoted_and_dbt_takes_them(tmp_path):
    """`Bronze` and `select` are identifiers; SQLMesh writes schema and bronze names unquoted,
    where PostgreSQL folds the one and cannot parse the other (decision 0900)."""
    import shutil

    from tests.conftest import BASE_SPEC

    shutil.copytree(BASE_SPEC, tmp_path / "spec")
    (tmp_path / "assay.yml").write_text("specs: spec\nschemas:\n  bronze: Bronze\n  silver: select\n", encoding="utf-8")
    loaded = load_spec(tmp_path)
    assert validate(loaded, target="dbt").ok
    sqlmesh = validate(loaded, target="sqlmesh")
    assert [(d.file, d.line, d.code) for d in sqlmesh.diagnostics] == [
        ("assay.yml", 3, "UNSUPPORTED_BY_TARGET"), ("assay.yml", 4, "UNSUPPORTED_BY_TARGET")]
    assert "`schemas.bronze: Bronze`" in sqlmesh.diagnostics[0].message


def test_assay_validate_prints_each_refusal_on_one_line_with_file_and_line(tmp_path):
    """Through the CLI: a name holding a newline cannot split a diagnostic into two lines."""
    from click.testing import CliRunner

    from assay.cli.main import cli

    write_project(tmp_path, "a\nb")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert f"{tmp_path}/assay.yml:4: SPEC_INVALID: `schemas.bronze` is \"bronze\\nb\", which is not a schema name; write ASCII letters, digits and `_`, starting with a letter or `_`, at most 63 characters." in lines
    assert f"{tmp_path}/spec/entities.yaml:3: SPEC_INVALID: entity name `entity\\u000ab` is not allowed; write lower-case letters, digits and single `_`, starting with a letter." in lines
    # Every line but the summary is one whole diagnostic: no line is the tail of a split name.
    assert all(line.startswith(str(tmp_path)) for line in lines[:-1] if line.strip()), result.output


@pytest.mark.parametrize("role", ["silver", "gold", "meta"])
def test_a_schema_that_is_the_bronze_schema_is_refused(tmp_path, role):
    """An outside tester (session 41): `silver: bronze` validated, and `dbt build` replaced the
    bronze table `order` with the entity `order`: the raw rows were gone."""
    from tests.conftest import BASE_SPEC

    shutil.copytree(BASE_SPEC, tmp_path / "spec")
    (tmp_path / "assay.yml").write_text(f"specs: spec\nschemas:\n  bronze: raw\n  {role}: RAW\n", encoding="utf-8")
    result = validate(load_spec(tmp_path), target="dbt")
    assert [(d.file, d.line, d.code) for d in result.diagnostics] == [("assay.yml", 4, "SPEC_INVALID")]
    default = {"silver": "silver", "gold": "gold", "meta": "assay_meta"}[role]
    assert result.diagnostics[0].message == (
        f"`schemas.{role}` is `RAW`, the bronze schema: the build would write its tables among the raw ones and could "
        f"replace a bronze table of the same name; write a schema of its own (the default is `{default}`).")
