"""SQLMesh on Spark (`--dialect spark`, parquet tables): what SQLMesh would MERGE is refused by
validation, by file and line, before anything is written (decision 0830).

An entity that joins the quality system has a `<entity>__reject` model, INCREMENTAL_BY_UNIQUE_KEY,
which SQLMesh applies with `MERGE INTO` on Spark; parquet takes no MERGE. Everything else (FULL
models, the SCD type 2 history, the append-only mart) generates. No Spark runs here.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.api import load_project
from assay.api_sqlmesh import duckdb_config, generate_sqlmesh_project, sqlmesh_files
from assay.cli.main import cli
from assay.errors import EXIT_PROBLEM, EXIT_USAGE, SpecError
from assay.ir.resolve import compile_spec
from tests.support.corpus import DIRTY, PRECEDENCE

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "examples" / "shop"
FIXTURES = ROOT / "tests" / "fixtures" / "specs"
REASON = (
    "keeps the reject history by key, which SQLMesh applies with `MERGE INTO` the stored table on Spark, and "
    "Spark's parquet tables take no MERGE, UPDATE or DELETE (decision 0830); generate for dbt (`assay generate dbt`), "
    "whose package builds these tables on Spark parquet by rebuild-and-swap; or `--dialect databricks` for Delta tables."
)

# Two entities that do not join the quality system (no `quality:`, no `quarantine:`, no field
# rule): no reject model, so nothing SQLMesh would MERGE. `customers` is type 2.
NO_QUALITY = {
    "entities.yaml": """spec_version: 1
entities:
  customers:
    grain: one row per customer
    key: [customer_id]
    scd: type2
    fields:
      customer_id: {type: string, required: true}
      name: {type: string}
  orders:
    grain: one row per order
    key: [order_id]
    fields:
      order_id: {type: string, required: true}
      amount: {type: "decimal(12,2)"}
""",
    "mapping_customers.yaml": """mapping_version: 1
source: raw_customers
target: customers
key:
  customer_id: {from: "$.id", transform: [trim]}
fields:
  name: {from: "$.name", transform: [trim]}
""",
    "mapping_orders.yaml": """mapping_version: 1
source: raw_orders
target: orders
key:
  order_id: {from: "$.id", transform: [trim]}
fields:
  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}]}
""",
}
# Only `flag` rules on `orders`: it still joins the quality system, so it has a reject model
# (the IR's `has_reject`) and is refused on Spark like a quarantining entity.
FLAG_ONLY = dict(NO_QUALITY, **{
    "mapping_orders.yaml": NO_QUALITY["mapping_orders.yaml"].replace(
        '  amount: {from: "$.amount", transform: [{to_decimal: [12, 2]}]}\n',
        '  amount:\n    from: "$.amount"\n    transform: [{to_decimal: [12, 2]}]\n    quality:\n'
        "      - {rule: coercible, on_fail: flag}\n      - {rule: range, min: 0, on_fail: flag}\n",
    ).replace('  order_id: {from: "$.id", transform: [trim]}\n',
              '  order_id: {from: "$.id", transform: [trim], quality: [{rule: coercible, on_fail: flag}]}\n'),
})


def write_spec(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def sqlmesh_project(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(duckdb_config(), encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(needle))


def generate(spec: Path, project: Path, dialect: str):
    return CliRunner().invoke(cli, ["generate", "sqlmesh", "--spec", str(spec), "--project", str(project), "--dialect", dialect])


def test_generate_for_spark_refuses_every_entity_with_a_reject_model_by_file_and_line(tmp_path):
    project = sqlmesh_project(tmp_path / "project")
    result = generate(SHOP, project, "spark")
    assert result.exit_code == EXIT_PROBLEM, result.output
    entities = SHOP / "spec" / "entities.yml"
    assert result.stdout.splitlines() == [
        f"{entities.as_posix()}:{line_of(entities, '  customer:')}: UNSUPPORTED_BY_TARGET: refused on sqlmesh "
        f"--dialect spark: entity `customer` (its `customer__reject` model, `INCREMENTAL_BY_UNIQUE_KEY` on `reject_id`) {REASON}",
        f"{entities.as_posix()}:{line_of(entities, '  order:')}: UNSUPPORTED_BY_TARGET: refused on sqlmesh "
        f"--dialect spark: entity `order` (its `order__reject` model, `INCREMENTAL_BY_UNIQUE_KEY` on `reject_id`) {REASON}",
    ]
    assert "2 problems found in the spec; nothing was changed." in result.stderr
    assert sorted(p.name for p in project.iterdir()) == ["config.yaml"]  # nothing written
    # `assay validate` for the same target and dialect says the same, with the same exit code
    validated = CliRunner().invoke(cli, ["validate", "--target", "sqlmesh", "--dialect", "spark", str(SHOP)])
    assert validated.exit_code == EXIT_PROBLEM and validated.stdout == result.stdout


@pytest.mark.parametrize("dialect", ["duckdb", "databricks"])
def test_the_same_spec_generates_on_other_dialects(tmp_path, dialect):
    project = sqlmesh_project(tmp_path / "project")
    result = generate(SHOP, project, dialect)
    assert result.exit_code == 0, result.output
    assert (project / "models" / "assay" / "order" / "order__reject.sql").is_file()
    assert f"dialect {dialect}" in (project / "models" / "assay" / "order" / "order.sql").read_text()
    ok = CliRunner().invoke(cli, ["validate", "--target", "sqlmesh", "--dialect", dialect, str(SHOP)])
    assert ok.exit_code == 0 and ok.stdout.endswith(f", for sqlmesh --dialect {dialect})\n"), ok.output


def test_a_spec_without_reject_models_generates_on_spark_type2_included(tmp_path):
    spec = write_spec(tmp_path / "spec", NO_QUALITY)
    project = sqlmesh_project(tmp_path / "project")
    result = generate(spec, project, "spark")
    assert result.exit_code == 0, result.output
    models = sorted(p.relative_to(project / "models" / "assay").as_posix() for p in (project / "models" / "assay").rglob("*.sql"))
    assert models == [
        "customers/customers.sql", "customers/customers__current.sql", "customers/customers__staged.sql",
        "customers/mart_data_quality__customers.sql", "mart_data_quality.sql", "orders/mart_data_quality__orders.sql",
        "orders/orders.sql", "orders/orders__staged.sql",
    ]
    assert "SCD_TYPE_2_BY_COLUMN" in (project / "models" / "assay" / "customers" / "customers.sql").read_text()


def test_flag_rules_alone_still_make_a_reject_model_and_are_refused_on_spark(tmp_path):
    spec = write_spec(tmp_path / "spec", FLAG_ONLY)
    project, diags, _ = compile_spec(spec, "sqlmesh", "spark")
    assert project is None
    assert [(d.file, d.line, d.code) for d in diags] == [("entities.yaml", line_of(spec / "entities.yaml", "  orders:"), "UNSUPPORTED_BY_TARGET")]
    assert diags[0].message.startswith("refused on sqlmesh --dialect spark: entity `orders` (its `orders__reject` model")
    # the refusal is exactly what the emitter writes: duckdb generates the reject model it refers to
    files = sqlmesh_files(load_project(spec, target="sqlmesh", dialect="duckdb"))
    assert "models/assay/orders/orders__reject.sql" in files
    assert "models/assay/customers/customers__reject.sql" not in files


@pytest.mark.parametrize("spec", [SHOP, DIRTY / "spec", PRECEDENCE / "spec", FIXTURES / "kitchen_sink"], ids=lambda p: p.parent.name if p.name == "spec" else p.name)
def test_spark_refuses_exactly_the_entities_the_emitter_gives_a_reject_model(spec):
    # one test of has_reject, shared by validation and resolution (validate/context.py joins_quality)
    project = load_project(spec)
    with_reject = sorted(e.name for e in project.entities if e.has_reject)
    _, diags, _ = compile_spec(spec, "sqlmesh", "spark")
    refused = sorted(d.message.split("`")[1] for d in diags if "--dialect spark" in d.message)
    assert refused == with_reject and with_reject


def test_the_api_refuses_too_and_writes_nothing(tmp_path):
    with pytest.raises(SpecError) as info:
        generate_sqlmesh_project(SHOP, tmp_path, dialect="spark")
    assert {d.code for d in info.value.diagnostics} == {"UNSUPPORTED_BY_TARGET"}
    assert not any(tmp_path.iterdir())


def test_validate_takes_dialect_only_with_the_sqlmesh_target():
    result = CliRunner().invoke(cli, ["validate", "--target", "dbt", "--dialect", "spark", str(SHOP)])
    assert result.exit_code == EXIT_USAGE
    assert "--dialect is the SQL dialect of the SQLMesh models; pass it with --target sqlmesh" in result.stderr
    # without --dialect, sqlmesh is validated for generate's default dialect (duckdb): the shop is fine
    plain = CliRunner().invoke(cli, ["validate", "--target", "sqlmesh", str(SHOP)])
    assert plain.exit_code == 0 and plain.stdout.endswith(", for sqlmesh)\n"), plain.output
