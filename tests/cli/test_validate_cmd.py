"""`assay validate` as a user runs it: exit codes, the lines it prints, the JSON shape."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.ir.resolve import compile_spec
from tests.support.corpus import CORPUS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "specs"


def run(*args: str):
    return CliRunner().invoke(cli, ["validate", *args])


@pytest.mark.parametrize(
    "spec, counts",
    [
        ("dirty", "13 entities, 13 mappings, 58 rules, 0 checks"),
        ("precedence", "3 entities, 3 mappings, 20 rules, 0 checks"),
    ],
)
def test_a_valid_spec_exits_0_with_a_one_line_summary(spec: str, counts: str) -> None:
    path = CORPUS / spec / "spec"
    result = run(str(path))
    assert result.exit_code == 0, result.output
    fingerprint = compile_spec(path)[0].fingerprint
    assert result.stdout == f"ok: {counts} (spec {fingerprint}, for dbt)\n"
    assert result.stderr == ""


def test_a_bad_spec_exits_1_with_one_line_per_problem() -> None:
    result = run(str(FIXTURES / "five_mistakes"))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    prefix = (FIXTURES / "five_mistakes").as_posix() + "/"
    assert [line.split(": ", 2)[0] for line in lines] == [
        prefix + "cross_checks.yaml:3",
        prefix + "entity_customer.yaml:8",
        prefix + "entity_orders.yaml:11",
        prefix + "mapping_customer.yaml:7",
        prefix + "mapping_orders.yaml:12",
    ]
    assert lines[2] == (
        prefix + "entity_orders.yaml:11: SPEC_INVALID: entity `orders` dedupes `latest_by` without `tie_break`; "
        "two rows with the same `updated_at` would make the winner arbitrary. "
        "Write `tie_break: [_load_id]` (or columns that settle ties)."
    )
    # The documents assay does not handle are named once, on stderr, beside the count.
    assert result.stderr == (
        f"skipped {prefix}metrics.yaml: `metric_version` documents carry no quality semantics\n5 problems found.\n"
    )


def test_problem_files_are_named_as_the_user_can_open_them(tmp_path, monkeypatch) -> None:
    # The paths printed open from where the command ran.
    (tmp_path / "shop").mkdir()
    for path in (FIXTURES / "five_mistakes").iterdir():
        (tmp_path / "shop" / path.name).write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    relative = run("shop")
    monkeypatch.chdir(tmp_path / "shop")
    here = run()
    assert relative.stdout.splitlines()[0].startswith("shop/cross_checks.yaml:3: SPEC_INVALID: ")
    assert here.stdout.splitlines()[0].startswith("cross_checks.yaml:3: SPEC_INVALID: ")


def test_one_problem_is_counted_in_the_singular(write_spec) -> None:
    spec = write_spec({"notes.yaml": "entities: {}\n"})
    result = run(str(spec))
    assert result.exit_code == 1
    assert result.stdout == (
        f"{spec.as_posix()}/notes.yaml:1: SPEC_GRAMMAR: this document has no version key; start it with "
        "`spec_version: 1` (entities), `mapping_version: 1` (a mapping) or `tables_version: 1` "
        "(checks on tables assay does not build).\n"
    )
    assert result.stderr == "1 problem found.\n"


def test_json_on_a_bad_spec() -> None:
    result = run("--json", str(FIXTURES / "five_mistakes"))
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert sorted(payload) == ["ok", "problems", "skipped", "summary", "target", "warnings"]
    assert payload["ok"] is False and payload["target"] == "dbt" and payload["warnings"] == []
    assert payload["summary"] is None
    assert payload["skipped"] == [{"file": "metrics.yaml", "kind": "metric_version"}]
    assert len(payload["problems"]) == 5
    first = payload["problems"][0]
    assert sorted(first) == ["code", "file", "line", "message", "severity"]
    # Files in JSON stay relative to the project root, the form the IR uses.
    assert (first["file"], first["line"], first["code"], first["severity"]) == ("cross_checks.yaml", 3, "SPEC_INVALID", "error")
    assert result.stderr == ""


def test_json_on_a_valid_spec() -> None:
    result = run("--json", str(CORPUS / "precedence" / "spec"))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "ok": True,
        "target": "dbt",
        "problems": [],
        "warnings": [],
        "skipped": [],
        "summary": {"checks": 0, "entities": 3, "mappings": 3, "rules": 20},
    }


def test_a_missing_directory_is_a_usage_error(tmp_path) -> None:
    result = run(str(tmp_path / "nowhere"))
    assert result.exit_code == 3
    assert f"{tmp_path / 'nowhere'} is not a directory; pass --spec with the folder that holds assay.yml (or your spec YAML files)." in result.stderr
    assert result.stdout == ""


def test_a_file_instead_of_a_directory_is_a_usage_error(tmp_path) -> None:
    (tmp_path / "spec.yaml").write_text("spec_version: 1\n")
    assert run(str(tmp_path / "spec.yaml")).exit_code == 3


def test_an_empty_directory_is_refused(tmp_path) -> None:
    # nothing was checked, so nothing passes (issue 19: a wrong folder must not pass CI)
    result = run(str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (f"Error: {tmp_path} holds no spec documents (*.yml, *.yaml), so there is nothing to validate; "
                             "pass --spec with the folder that holds your assay.yml and spec files.\n")


def test_an_empty_directory_is_refused_as_json_with_json(tmp_path) -> None:
    """An outside tester (session 36): `--json` printed the refusal as plain text on stderr."""
    import json

    result = run(str(tmp_path), "--json")
    assert result.exit_code == 1
    said = json.loads(result.stdout)
    assert said["ok"] is False and [p["code"] for p in said["problems"]] == ["SPEC_NO_DOCUMENTS"]
    assert "holds no spec documents" in said["problems"][0]["message"]


def test_a_valid_spec_with_a_skipped_document_names_it_once(write_spec) -> None:
    spec = write_spec({"metrics.yaml": "metric_version: 1\n"})
    result = run(str(spec))
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: 2 entities, 2 mappings, 8 rules, 0 checks (spec ")
    assert result.stderr == f"skipped {spec.as_posix()}/metrics.yaml: `metric_version` documents carry no quality semantics\n"


# --------------------------------------------------------------------------- --target

INCREMENTAL = FIXTURES / "incremental"
# An advisory check of a table assay only reads: SQLMesh runs checks as audits of the models assay
# builds, so it skips this one (a warning); dbt runs it.
READ_ONLY = """tables_version: 1
tables:
  bronze.raw_customers:
    grain: [id]
    checks:
      - {check_id: few_rows, kind: row_expectation, enforcement: advisory, max_rows: 100}
"""


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_a_target_refusal_exits_1_by_file_and_line() -> None:
    result = run("--target", "sqlmesh", str(INCREMENTAL))
    assert result.exit_code == 1
    line = _line_of(INCREMENTAL / "entities.yaml", "materialized: incremental")
    assert result.stdout.splitlines() == [
        f"{INCREMENTAL.as_posix()}/entities.yaml:{line}: UNSUPPORTED_BY_TARGET: refused on sqlmesh: entity `orders` "
        "(`materialized: incremental`) needs the ledger-style staged model, which exists for dbt only; use "
        "`materialized: table` to generate for SQLMesh, or generate for dbt."
    ]
    assert result.stderr == "1 problem found.\n"
    # the same spec is valid for dbt, the default target
    assert run(str(INCREMENTAL)).exit_code == 0
    assert run("--target", "dbt", str(INCREMENTAL)).stdout.endswith(", for dbt)\n")


def test_what_a_target_skips_is_a_warning_and_exits_0(tmp_path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(INCREMENTAL, spec)
    path = spec / "entities.yaml"
    path.write_text(path.read_text().replace("    materialized: incremental\n    incremental: {lag: 2h}\n", ""))
    (spec / "tables.yaml").write_text(READ_ONLY)
    result = run("--target", "sqlmesh", str(spec))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: ") and result.stdout.endswith(", for sqlmesh)\n")
    line = _line_of(spec / "tables.yaml", "few_rows")
    assert result.stderr.startswith(
        f"{spec.as_posix()}/tables.yaml:{line}: warning: UNSUPPORTED_BY_TARGET: skipped on sqlmesh: advisory check "
        "`FEW_ROWS` of `bronze.raw_customers`")
    assert len(result.stderr.splitlines()) == 1
    payload = json.loads(run("--json", "--target", "sqlmesh", str(spec)).stdout)
    assert payload["ok"] is True and payload["target"] == "sqlmesh" and payload["problems"] == []
    assert [(w["file"], w["line"], w["severity"]) for w in payload["warnings"]] == [("tables.yaml", line, "warning")]
    # for dbt the advisory check runs: nothing to say
    assert run("--target", "dbt", str(spec)).stderr == ""


def test_the_default_target_is_the_one_generate_recorded(tmp_path) -> None:
    project = tmp_path / "project"
    (project / ".assay").mkdir(parents=True)
    (project / ".assay" / "manifest.json").write_text(json.dumps({"files": {}, "target": "sqlmesh", "spec_dir": str(INCREMENTAL)}))
    result = run("--project", str(project))
    assert result.exit_code == 1
    assert "refused on sqlmesh: entity `orders`" in result.stdout
    # --target overrides what the project recorded
    assert run("--project", str(project), "--target", "dbt").exit_code == 0
    assert json.loads(run("--project", str(project), "--json", "--target", "dbt").stdout)["target"] == "dbt"


def test_an_unknown_target_is_a_usage_error() -> None:
    result = run("--target", "airflow", str(INCREMENTAL))
    assert result.exit_code == 3
    assert "'airflow' is not one of 'dbt', 'sqlmesh'" in result.stderr


def test_a_warning_beside_a_problem_stays_a_warning(tmp_path) -> None:
    """A spec that the target refuses and also skips part of: the refusal is the one problem, the
    skipped check is a warning line, as it is when nothing else is wrong."""
    spec = tmp_path / "spec"
    shutil.copytree(INCREMENTAL, spec)
    (spec / "tables.yaml").write_text(READ_ONLY)
    result = run("--target", "sqlmesh", str(spec))
    assert result.exit_code == 1, result.output
    warned = [ln for ln in result.stderr.splitlines() if "skipped on sqlmesh" in ln]
    assert len(warned) == 1 and ": warning: UNSUPPORTED_BY_TARGET: skipped on sqlmesh: advisory check `FEW_ROWS`" in warned[0]
    assert "refused on sqlmesh: entity `orders`" in result.output and "1 problem found." in result.output, result.output
    payload = json.loads(run("--json", "--target", "sqlmesh", str(spec)).stdout)
    assert [p["severity"] for p in payload["problems"]] == ["error"]
    assert [w["severity"] for w in payload["warnings"]] == ["warning"]
