"""Loading a spec directory: which files are read, how they are named, what is skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from assay.ir.model import dump
from assay.ir.resolve import compile_spec
from assay.spec.loader import load_spec

FIXTURES = Path(__file__).parents[1] / "fixtures"
BASE_SPEC = FIXTURES / "specs" / "base"


def test_five_mistakes_in_five_files_are_reported_in_one_run() -> None:
    project, diagnostics, loaded = compile_spec(FIXTURES / "specs" / "five_mistakes")
    assert project is None
    # One per file, each where it was written: none of them hides another.
    assert [(d.file, d.line, d.code) for d in diagnostics] == [
        ("cross_checks.yaml", 3, "SPEC_INVALID"),  # coverage of an undeclared relationship
        ("entity_customer.yaml", 8, "SPEC_INVALID"),  # type `integer`
        ("entity_orders.yaml", 11, "SPEC_INVALID"),  # dedupe without tie_break
        ("mapping_customer.yaml", 7, "SPEC_INVALID"),  # transform `to_integer`
        ("mapping_orders.yaml", 12, "SPEC_INVALID"),  # range without on_fail
    ]
    assert "Did you mean `int`?" in diagnostics[1].message
    assert "Did you mean `to_int`?" in diagnostics[3].message
    assert loaded.skipped == [("metrics.yaml", "metric_version")]


def test_unknown_documents_are_listed_once_as_skipped_and_do_not_fail(write_spec) -> None:
    spec = write_spec(
        {
            "metrics.yaml": "metric_version: 1\nmetrics: {revenue: {expr: sum(amount)}}\n",
            "marts/orders_mart.yaml": "mart_version: 1\nmart: {name: orders_mart}\n",
        }
    )
    project, diagnostics, loaded = compile_spec(spec)
    assert diagnostics == []
    assert [e.name for e in project.entities] == ["customer", "orders"]
    assert loaded.skipped == [("marts/orders_mart.yaml", "mart_version"), ("metrics.yaml", "metric_version")]
    assert project.skipped == (("marts/orders_mart.yaml", "mart_version"), ("metrics.yaml", "metric_version"))
    assert "metrics.yaml" in project.spec_files


def test_empty_and_comment_only_documents_are_said_and_read_as_nothing(write_spec) -> None:
    project, diagnostics, loaded = compile_spec(write_spec({"empty.yaml": "", "notes.yml": "# later\n"}))
    assert diagnostics == []
    # a warning each (decision 0977), never a refusal
    assert [(d.file, d.code, d.severity) for d in loaded.diagnostics] == [("empty.yaml", "SPEC_EMPTY", "warning"), ("notes.yml", "SPEC_EMPTY", "warning")]
    # the base spec compiles as it would without them
    assert [e.name for e in project.entities] == ["customer", "orders"]
    assert {"entity_customer.yaml", "entity_orders.yaml", "mapping_customer.yaml", "mapping_orders.yaml"} <= set(project.spec_files)


def test_build_and_hidden_directories_are_not_read(write_spec) -> None:
    # dbt writes YAML of its own into these; reading it as spec would refuse a valid project.
    broken = "spec_version: 1\nentities: [\n"
    spec = write_spec({"target/run.yml": broken, "dbt_packages/p/x.yml": broken, ".venv/x.yaml": broken, "logs/x.yml": broken})
    project, diagnostics, _loaded = compile_spec(spec)
    assert diagnostics == []
    assert [e.name for e in project.entities] == ["customer", "orders"]
    assert not [f for f in project.spec_files if f.startswith(("target/", "dbt_packages/", ".venv/", "logs/"))]


def test_file_names_stay_relative_when_specs_live_in_a_subdirectory(tmp_path, monkeypatch) -> None:
    # A relative root combined with `specs:` used to yield absolute paths in the IR.
    project_dir = tmp_path / "shop"
    shutil.copytree(BASE_SPEC, project_dir / "spec")
    (project_dir / "assay.yml").write_text("name: shop\nspecs: spec\n")
    monkeypatch.chdir(tmp_path)
    project, diagnostics, _loaded = compile_spec("shop")
    assert diagnostics == []
    assert project.spec_files == (
        "spec/entity_customer.yaml",
        "spec/entity_orders.yaml",
        "spec/mapping_customer.yaml",
        "spec/mapping_orders.yaml",
    )
    assert project.entity("orders").file == "spec/entity_orders.yaml"
    assert str(tmp_path) not in json.dumps(dump(project))


def test_problems_in_a_subdirectory_name_the_file_from_the_project_root(tmp_path) -> None:
    shutil.copytree(BASE_SPEC, tmp_path / "spec")
    (tmp_path / "assay.yml").write_text("specs: spec\n")
    (tmp_path / "spec" / "notes.yaml").write_text("entities: {}\n")
    _project, diagnostics, _loaded = compile_spec(tmp_path)
    assert [(d.file, d.line, d.code) for d in diagnostics] == [("spec/notes.yaml", 1, "SPEC_GRAMMAR")]


def test_nodes_carry_the_line_of_the_key_they_are_written_under() -> None:
    loaded = load_spec(BASE_SPEC)
    _file, doc, _raw = next(d for d in loaded.entity_docs if d[0] == "entity_orders.yaml")
    orders = doc.entities["orders"]
    assert orders.line() == 3  # `orders:`, not `grain:` below it
    assert orders.line("dedupe") == 12
    assert orders.dedupe.line() == 12
    assert orders.quality[0].line() == 15
    assert orders.fields["amount"].line() == 9


def test_yaml_dates_in_range_bounds_stay_the_text_that_was_written(write_spec) -> None:
    # PyYAML would turn 2024-01-31 into a datetime.date; bounds are compared as ISO text.
    spec = write_spec(
        {
            "entity_customer.yaml": """
                spec_version: 1
                entities:
                  customer:
                    grain: one row per customer
                    key: [customer_id]
                    fields:
                      customer_id: {type: string, required: true}
                      tier: {type: int}
                      since: {type: date}
                    quarantine: {retention: 30d}
            """,
            "mapping_customer.yaml": """
                mapping_version: 1
                source: raw_customers
                target: customer
                key:
                  customer_id: {from: "$.id", transform: [trim]}
                fields:
                  tier: {from: "$.tier", transform: [to_int]}
                  since:
                    from: "$.since"
                    transform: [{parse_date: ISO8601}]
                    quality:
                      - {rule: range, min: 2000-01-01, max: 2024-01-31, on_fail: flag}
                unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id"]
            """,
        }
    )
    project, diagnostics, _loaded = compile_spec(spec)
    assert diagnostics == []
    [rule] = project.entity("customer").rules_of_kind("range")
    assert (rule.name, rule.params) == ("since_range", (("max", "2024-01-31"), ("min", "2000-01-01")))


def test_one_wrong_setting_does_not_make_the_projects_other_yaml_files_spec_problems(tmp_path) -> None:
    """A wrong value in assay.yml (here `dbt.snapshot_clock`) is the one problem: the spec folder
    it names is still where the spec is read, not the project's directory with its dbt_project.yml
    and profiles.yml, which were each told `no version key` beside it."""
    shutil.copytree(BASE_SPEC, tmp_path / "spec")
    (tmp_path / "assay.yml").write_text("name: shop\nspecs: spec\ndbt:\n  snapshot_clock: locale\n")
    (tmp_path / "dbt_project.yml").write_text("name: shop\nversion: '1.0'\nprofile: shop\n")
    (tmp_path / "profiles.yml").write_text("shop:\n  target: dev\n")
    project, diagnostics, _ = compile_spec(tmp_path)
    assert project is None
    assert [(d.file, d.line, d.code, d.message) for d in diagnostics] == [
        ("assay.yml", 4, "SPEC_GRAMMAR", "dbt.snapshot_clock is `locale`; write one of `utc`, `project`.")]


def test_a_column_a_field_reads_listed_as_unmapped_is_a_warning(tmp_path) -> None:
    """`unmapped:` lists the bronze columns no field reads: one a field reads was accepted silently
    (an outside tester, session 37). A warning, never a refusal: it changes no row."""
    spec = tmp_path / "spec"
    shutil.copytree(BASE_SPEC, spec)
    mapping = spec / "mapping_customer.yaml"
    text = mapping.read_text()
    assert 'unmapped: ["$._load_id"' in text
    mapping.write_text(text.replace('unmapped: ["$._load_id"', 'unmapped: ["$.tier", "$._load_id"'))
    from assay.validate import validate

    project, errors, _loaded = compile_spec(spec)
    assert project is not None and errors == []
    validated = validate(load_spec(spec))
    assert validated.ok
    assert [(d.file, d.line, d.code, d.severity) for d in validated.diagnostics] == [
        ("mapping_customer.yaml", 8, "SPEC_UNMAPPED_READ", "warning")]
    assert "field `tier` reads it; take it out of `unmapped:`" in validated.diagnostics[0].message
