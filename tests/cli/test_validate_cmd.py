"""`assay validate` as a user runs it: exit codes, the lines it prints, the JSON shape."""

from __future__ import annotations

import json
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
    assert result.stdout == f"ok: {counts} (spec {fingerprint})\n"
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
    assert sorted(payload) == ["ok", "problems", "skipped", "summary"]
    assert payload["ok"] is False
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
        "problems": [],
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


def test_an_empty_directory_passes_with_a_warning(tmp_path) -> None:
    result = run(str(tmp_path))
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: 0 entities, 0 mappings, 0 rules, 0 checks (spec ")
    assert result.stderr == f"warning: {tmp_path} holds no spec documents (*.yml, *.yaml); pass the folder that holds your spec.\n"


def test_a_valid_spec_with_a_skipped_document_names_it_once(write_spec) -> None:
    spec = write_spec({"metrics.yaml": "metric_version: 1\n"})
    result = run(str(spec))
    assert result.exit_code == 0
    assert result.stdout.startswith("ok: 2 entities, 2 mappings, 8 rules, 0 checks (spec ")
    assert result.stderr == f"skipped {spec.as_posix()}/metrics.yaml: `metric_version` documents carry no quality semantics\n"
