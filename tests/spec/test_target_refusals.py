"""What the SQLMesh target cannot realise is refused by validation for that target, by file and line.

No emitter raises and nothing is dropped silently: `compile_spec(spec, target="sqlmesh")` names
every such construct; the same spec compiled for dbt (or for no target) is valid.
"""

from __future__ import annotations

import shutil
from pathlib import Path

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


def test_a_required_declared_check_is_refused_on_sqlmesh(tmp_path):
    root = spec(tmp_path, check=REQUIRED)
    [(file, line, code, message)] = refusals(root, "sqlmesh")
    assert (file, line, code) == (ENTITIES, line_of(root, ENTITIES, "enough_customers"), "UNSUPPORTED_BY_TARGET")
    assert message.startswith("refused on sqlmesh: required check `ENOUGH_CUSTOMERS` of `customers` would never hold a table back")
    assert compile_spec(root, "dbt")[1] == []


def test_a_sql_check_file_is_refused_on_sqlmesh(tmp_path):
    root = spec(tmp_path, sql_file=True)
    [(file, line, code, message)] = refusals(root, "sqlmesh")
    assert (file, line, code) == ("checks/silver/customers/named.sql", 1, "UNSUPPORTED_BY_TARGET")
    assert message.startswith("refused on sqlmesh: SQL check file `checks/silver/customers/named.sql`")
    assert "does not run SQL check files" in message
    assert compile_spec(root, "dbt")[1] == []


def test_an_advisory_check_is_reported_not_refused(tmp_path):
    # It changes no row, so the project still generates; validation says it is skipped.
    root = spec(tmp_path, check=ADVISORY)
    project, diags, _ = compile_spec(root, "sqlmesh")
    assert project is not None and diags == []
    [warning] = validate(load_spec(root), "sqlmesh").diagnostics
    assert warning.severity == "warning" and warning.message.startswith("skipped on sqlmesh: advisory check")


def test_every_refusal_is_reported_together(tmp_path):
    root = spec(tmp_path, incremental=True, check=REQUIRED, sql_file=True)
    assert len(refusals(root, "sqlmesh")) == 3
