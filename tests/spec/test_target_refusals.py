"""What the SQLMesh target cannot realise is refused by validation for that target, by file and line.

No emitter raises and nothing is dropped silently: `compile_spec(spec, target="sqlmesh")` names
every such construct; the same spec compiled for dbt (or for no target) is valid.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assay.ir.resolve import compile_spec
from assay.spec.loader import load_spec
from assay.validate import validate

SPEC = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "incremental"
ENTITIES = "entities.yaml"
REQUIRED = "      - {check_id: enough_customers, kind: row_expectation, enforcement: required, min_rows: 1}\n"
ADVISORY = REQUIRED.replace("required", "advisory")
SQL_CHECK = "/* assay\non_failure: warn\n*/\nSELECT * FROM silver.customers WHERE name IS NULL;\n"


def spec(tmp_path: Path, incremental: bool = False, check: str = "", sql_file: bool = False) -> Path:
    root = tmp_path / "spec"
    shutil.copytree(SPEC, root)
    path = root / ENTITIES
    text = path.read_text()
    if not incremental:
        text = text.replace("    materialized: incremental\n    incremental: {lag: 2h}\n", "")
    if check:
        text = text.replace("      name: {type: string}\n", "      name: {type: string}\n    checks:\n" + check, 1)
    path.write_text(text)
    if sql_file:
        target = root / "checks" / "silver" / "customers"
        target.mkdir(parents=True)
        (target / "named.sql").write_text(SQL_CHECK)
    return root


def line_of(root: Path, file: str, needle: str) -> int:
    lines = (root / file).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


def refusals(root: Path, target: str) -> list[tuple]:
    project, diags, _ = compile_spec(root, target)
    assert project is None
    return [(d.file, d.line, d.code, d.message) for d in diags]


def test_incremental_is_refused_on_sqlmesh_at_its_materialized_line(tmp_path):
    root = spec(tmp_path, incremental=True)
    assert refusals(root, "sqlmesh") == [
        (
            ENTITIES,
            line_of(root, ENTITIES, "materialized: incremental"),
            "UNSUPPORTED_BY_TARGET",
            "refused on sqlmesh: entity `orders` (`materialized: incremental`) needs the ledger-style staged model, "
            "which exists for dbt only; use `materialized: table` to generate for SQLMesh, or generate for dbt.",
        )
    ]
    for target in ("dbt", None):
        project, diags, _ = compile_spec(root, target)
        assert diags == [] and project is not None


def test_declared_checks_and_block_and_warn_files_of_entities_generate_for_sqlmesh(tmp_path):
    # They run as audits of the entity model (decisions 0210-0212): nothing to refuse or skip.
    root = spec(tmp_path, check=REQUIRED + ADVISORY.replace("enough_customers", "some_customers"), sql_file=True)
    block = root / "checks" / "silver" / "customers" / "blocked.sql"
    block.write_text(SQL_CHECK.replace("warn", "block"))
    project, diags, _ = compile_spec(root, "sqlmesh")
    assert diags == [] and project is not None
    assert validate(load_spec(root), "sqlmesh").diagnostics == []


@pytest.mark.parametrize("broken", ["\t", "fields: null\n    was_fields:\n"])
def test_check_files_of_an_entity_whose_document_is_broken_are_not_read_only_tables_on_sqlmesh(tmp_path, broken):
    """A YAML error in the entities file (or an entity left out for its own grammar problem) made
    SQLMesh's validation call the entity's warn and block files checks of a table assay only reads,
    "skipped" and "refused" (an outside tester, session 44): the document's problem is the one."""
    root = spec(tmp_path, sql_file=True)
    block = root / "checks" / "silver" / "customers" / "blocked.sql"
    block.write_text(SQL_CHECK.replace("warn", "block"))
    path = root / ENTITIES
    text = path.read_text()
    if broken == "\t":
        path.write_text(text.replace("      name: {type: string}\n", "\t  name: {type: string}\n", 1))
    else:
        start = text.index("  customers:")
        at = text.index("    fields:\n", start)
        path.write_text(text[:at] + "    " + broken + text[at + len("    fields:\n"):])
    diags = validate(load_spec(root), "sqlmesh", "duckdb").diagnostics
    assert [d.code for d in diags] == ["SPEC_YAML" if broken == "\t" else "SPEC_GRAMMAR"] * (1 if broken == "\t" else 2), diags
    assert all(d.file == ENTITIES for d in diags)


def test_a_keep_file_is_refused_on_sqlmesh_at_its_on_failure_line(tmp_path):
    root = spec(tmp_path, sql_file=True)
    (root / "checks" / "silver" / "customers" / "named.sql").write_text(SQL_CHECK.replace("warn", "keep"))
    [(file, line, code, message)] = refusals(root, "sqlmesh")
    assert (file, line, code) == ("checks/silver/customers/named.sql", 2, "UNSUPPORTED_BY_TARGET")
    assert message == (
        "refused on sqlmesh: `on_failure: keep` SQL check file `checks/silver/customers/named.sql` (check "
        "`silver.customers/named`) needs the table marked kept and its readers refused until its checks pass again, "
        "which SQLMesh cannot do: an audit can only stop the plan or run it belongs to, never a later one "
        "(decision 0213); use `on_failure: block` (a failing plan leaves the virtual layer on the previous data) "
        "or `on_failure: warn` to generate for SQLMesh, or generate for dbt."
    )
    assert compile_spec(root, "dbt")[1] == []


READ_ONLY = """tables_version: 1
tables:
  bronze.raw_customers:
    grain: [id]
    checks:
      - {check_id: some_rows, kind: row_expectation, enforcement: required, min_rows: 1}
      - {check_id: few_rows, kind: row_expectation, enforcement: advisory, max_rows: 100}
"""


def test_checks_of_a_table_assay_only_reads_are_refused_or_skipped_on_sqlmesh(tmp_path):
    root = spec(tmp_path)
    (root / "tables.yaml").write_text(READ_ONLY)
    files = root / "checks" / "bronze" / "raw_customers"
    files.mkdir(parents=True)
    (files / "blocked.sql").write_text(SQL_CHECK.replace("warn", "block").replace("silver.customers", "bronze.raw_customers"))
    (files / "warned.sql").write_text(SQL_CHECK.replace("silver.customers", "bronze.raw_customers"))
    diags = validate(load_spec(root), "sqlmesh").diagnostics
    got = sorted((d.severity, d.file, d.line, d.message.split(" is not run")[0].split(" would never")[0]) for d in diags)
    assert got == [
        ("error", "checks/bronze/raw_customers/blocked.sql", 1,
         "refused on sqlmesh: `on_failure: block` SQL check file `checks/bronze/raw_customers/blocked.sql` "
         "(check `bronze.raw_customers/blocked`)"),
        ("error", "tables.yaml", 6, "refused on sqlmesh: required check `SOME_ROWS` of `bronze.raw_customers`"),
        ("warning", "checks/bronze/raw_customers/warned.sql", 1,
         "skipped on sqlmesh: `on_failure: warn` SQL check file `checks/bronze/raw_customers/warned.sql` "
         "(check `bronze.raw_customers/warned`)"),
        ("warning", "tables.yaml", 7, "skipped on sqlmesh: advisory check `FEW_ROWS` of `bronze.raw_customers`"),
    ]
    assert all("the SQLMesh target runs checks as audits of the models assay builds, and this table is only read"
               in d.message for d in diags)
    assert compile_spec(root, "dbt")[1] == []


def test_every_refusal_is_reported_together(tmp_path):
    root = spec(tmp_path, incremental=True, sql_file=True)
    (root / "checks" / "silver" / "customers" / "named.sql").write_text(SQL_CHECK.replace("warn", "keep"))
    (root / "tables.yaml").write_text(READ_ONLY)
    project, diags, _ = compile_spec(root, "sqlmesh")
    assert project is None
    # incremental, keep, the read-only table's required check; its advisory one is reported as skipped
    assert sorted(d.severity for d in diags) == ["error", "error", "error", "warning"]


def _with_placed_at(root: Path, fmt: str) -> None:
    """A `placed_at` timestamp on orders, parsed with the strftime format `fmt`."""
    ent = root / ENTITIES
    ent.write_text(ent.read_text().replace("      quantity: {type: int}\n", "      quantity: {type: int}\n      placed_at: {type: timestamp}\n", 1))
    m = root / "mapping_orders.yaml"
    m.write_text(m.read_text().replace("unmapped:", f'  placed_at: {{from: "$.placed", transform: [{{parse_ts: "{fmt}"}}]}}\nunmapped:'))


def test_a_strftime_directive_only_duckdb_knows_is_refused_off_duckdb_and_noted_on_dbt(tmp_path):
    root = spec(tmp_path)
    _with_placed_at(root, "%d/%m/%Y %I:%M %p")
    line = line_of(root, "mapping_orders.yaml", "placed_at")
    said = ("`parse_ts: '%d/%m/%Y %I:%M %p'` of `placed_at` in the mapping of `raw_orders` (%I, %p) is understood by "
            "DuckDB's own strptime only: on PostgreSQL and Spark assay parses the portable directives (%Y %y %m %b %B "
            "%d %H %M %S %f %%) and the build stops at compile time; write the format with the portable directives, "
            "or parse the value with `regex_extract` first")
    project, diags, _ = compile_spec(root, "sqlmesh", "postgres")
    assert project is None
    assert [(d.file, d.line, d.code, d.message) for d in diags] == [
        ("mapping_orders.yaml", line, "UNSUPPORTED_BY_TARGET", f"refused on sqlmesh --dialect postgres: {said}.")]
    # DuckDB's strptime knows them: nothing to say
    project, diags, _ = compile_spec(root, "sqlmesh", "duckdb")
    assert diags == [] and project is not None
    # dbt's engine is the profile's: a warning, and the project generates (a directive no engine
    # reads is refused for every target: the test below)
    project, diags, _ = compile_spec(root, "dbt")
    assert project is not None and diags == []
    assert [(d.line, d.severity, d.message) for d in validate(load_spec(root), "dbt").diagnostics] == [
        (line, "warning", f"note on dbt: {said} if the project runs off DuckDB.")]


@pytest.mark.parametrize("fmt, codes", [("%Y-%m-%Q", "`%Q`"), ("%Y-%m-%d %Ez", "`%E`"), ("%d/%m/%Y%", "`%`"),
                                        ("%-Q %:z %Y", "`%-Q`, `%:`")])
def test_a_directive_no_engine_reads_is_refused_for_every_target(tmp_path, fmt, codes):
    """DuckDB's strptime refuses it at build time (`Failed to parse format specifier`), every other
    engine at compile time: a spec error at the transform's line, whatever the target (decision 1126)."""
    root = spec(tmp_path)
    _with_placed_at(root, fmt)
    line = line_of(root, "mapping_orders.yaml", "placed_at")
    said = (f"transform 1 of `placed_at` in mapping `raw_orders` into `orders`: `parse_ts: '{fmt}'` holds {codes}, "
            "which no engine's strptime reads (DuckDB's stops the build: `Failed to parse format specifier`); write "
            "the format with the directives every engine reads, %Y %y %m %b %B %d %H %M %S %f and %% for a literal "
            "`%`, e.g. `{parse_ts: '%Y-%m-%d %H:%M:%S'}`, or `{parse_ts: ISO8601}`.")
    for target, dialect in (("dbt", None), ("sqlmesh", "duckdb"), ("sqlmesh", "postgres"), ("sqlmesh", None)):
        project, diags, _ = compile_spec(root, target, dialect)
        assert project is None, (target, dialect)
        assert [(d.file, d.line, d.severity, d.message) for d in diags] == [
            ("mapping_orders.yaml", line, "error", said)], (target, dialect)


def test_duckdbs_directives_are_the_ones_the_installed_duckdb_reads():
    """`DUCKDB_STRFTIME` is what DuckDB's strptime accepts: every directive in it parses, every other
    `%X` / `%-X` is refused with "Failed to parse format specifier"."""
    import string

    import duckdb

    from assay.spec.transforms import DUCKDB_STRFTIME, PORTABLE_STRFTIME

    con = duckdb.connect()
    read = set()
    for c in string.ascii_letters + string.digits + string.punctuation:
        for code in (f"%{c}", f"%-{c}"):
            try:
                con.execute("select try_strptime('x', ?)", [code]).fetchall()
                read.add(code)
            except duckdb.Error as e:
                assert "Failed to parse format specifier" in str(e), e
    assert read == DUCKDB_STRFTIME
    assert {f"%{c}" for c in PORTABLE_STRFTIME} <= DUCKDB_STRFTIME


def test_portable_formats_are_said_nothing_about(tmp_path):
    root = spec(tmp_path)
    _with_placed_at(root, "%Y-%m-%d %H:%M:%S.%f %%")
    for target, dialect in (("dbt", None), ("sqlmesh", "postgres"), ("sqlmesh", "duckdb")):
        project, diags, _ = compile_spec(root, target, dialect)
        assert diags == [] and project is not None, (target, dialect, diags)


def test_the_portable_directives_are_the_packages_own():
    """One set: the generator's, the dbt package's `_strftime_directives` and the SQLMesh macros'."""
    import re

    from assay.spec.transforms import PORTABLE_STRFTIME
    from assay_sqlmesh.temporal import DIRECTIVES

    jinja = (Path(__file__).resolve().parents[2] / "dbt_package" / "macros" / "temporal" / "_strftime_directives.sql").read_text()
    assert set(re.findall(r"^\s*'(\w)': \[", jinja, re.M)) == set(PORTABLE_STRFTIME) == set(DIRECTIVES)
