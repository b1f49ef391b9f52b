"""The CLI contract (README, "Exit codes"): 0 success, 1 a problem with the spec, the project or
the warehouse (the message says what to do), 2 checks did not pass, 3 a usage error; never a
traceback for a user's mistake. Each test runs `assay` through Click as a user would."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import duckdb
import yaml
import pytest
from click.testing import CliRunner

from assay.api_sqlmesh import duckdb_config
from assay.cli.main import cli
from assay.scaffold import duckdb_profile, postgres_profile, write_dbt_skeleton
from tests.cli.test_check_rows_cmd import built_results_node

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    # Whatever the outcome, it was handled: no exception escaped and nothing printed a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# ----------------------------------------------------------------------------- 3: usage errors


@pytest.mark.parametrize(
    "args, says",
    [
        (["validate", "--no-such-option"], "No such option '--no-such-option'"),
        (["generate", "dbt", "--spec", "/no/such/spec"], "Directory '/no/such/spec' does not exist"),
        (["plan"], "Missing argument 'OLD_SPEC'"),
        (["check", "list", "--json", "--output", "yaml"], "Invalid value for '--output'"),
        (["no-such-command"], "No such command 'no-such-command'"),
        (["check", "list", "--output", "xml"], "Invalid value for '--output'"),
        (["plan", "/no/such/old", "/no/such/new"], "Directory '/no/such/old' does not exist"),
    ],
)
def test_usage_errors_exit_3(args, says):
    result = invoke(*args)
    assert result.exit_code == 3, result.output
    assert says in result.stderr
    assert result.stdout == ""


def test_help_and_version_exit_0():
    assert invoke("--help").exit_code == 0
    assert invoke("--version").exit_code == 0
    assert invoke("validate", "--help").exit_code == 0


def test_init_into_somebody_elses_directory_is_a_usage_error(tmp_path):
    (tmp_path / "mine.txt").write_text("my notes\n")
    result = invoke("init", str(tmp_path))
    assert result.exit_code == 3
    assert "is not empty and holds no assay example; pick a new directory" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.txt"]


def test_replay_of_an_unknown_entity_is_a_usage_error(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    result = invoke("replay", "nobody", "--spec", str(EXAMPLE), "--project", str(project))
    assert result.exit_code == 3
    assert "no entity 'nobody' in the spec in " in result.stderr
    assert "; pass one of customer, order." in result.stderr


@pytest.mark.parametrize("args", [("explain", "customer", "1"), ("replay", "customer", "--dry-run"),
                                  ("anomalies", "--entity", "customer")])
def test_a_project_that_is_no_project_says_which_spec_was_read(tmp_path, args):
    # An empty directory resolves to a spec with default settings and no entities: the error names
    # that directory and what to pass, not "entities are" followed by nothing.
    result = invoke(*args, "--project", str(tmp_path))
    assert result.exit_code == 3
    assert f"the spec read, {tmp_path}, declares no entities" in result.stderr
    assert "pass --project with the project `assay generate` wrote, or --spec" in result.stderr
    assert "Usage:" not in result.stderr


# ----------------------------------------------------------------------------- 1: the spec


@pytest.mark.parametrize("target", ["dbt", "sqlmesh"])
def test_generate_refuses_a_spec_without_entities_before_touching_the_project(tmp_path, target):
    project = tmp_path / "proj"
    if target == "dbt":
        write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    else:
        project.mkdir()
        (project / "config.yaml").write_text(duckdb_config(), encoding="utf-8")
    # A project generated from a real spec first: the refusal must neither write nor delete.
    assert invoke("generate", target, "--spec", str(EXAMPLE), "--project", str(project)).exit_code == 0
    before = _tree(project)
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "entities.yml").write_text("spec_version: 1\nentities: {}\n", encoding="utf-8")

    result = invoke("generate", target, "--spec", str(empty), "--project", str(project))

    assert result.exit_code == 1
    assert f"the spec in {empty} declares no entities, so there is nothing to generate and nothing was written." in result.stderr
    assert "Add a `spec_version: 1` document with `entities:`" in result.stderr
    assert _tree(project) == before


def test_validate_warns_that_a_spec_without_entities_cannot_be_generated(tmp_path):
    (tmp_path / "entities.yml").write_text("spec_version: 1\nentities: {}\n", encoding="utf-8")
    result = invoke("validate", str(tmp_path))
    assert result.exit_code == 0
    assert "declares no entities, so `assay generate` has nothing to build and refuses it" in result.stderr


def test_a_file_that_is_not_utf8_is_a_diagnostic_with_its_byte_offset(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    orders = spec / "spec" / "orders.yml"
    text = orders.read_bytes()
    offset = text.index(b"customer")  # somewhere inside line 5, saved as Latin-1 by an editor
    orders.write_bytes(text[:offset] + "café".encode("latin-1") + text[offset:])
    line = text[:offset].count(b"\n") + 1
    column = offset - text[:offset].rfind(b"\n")

    result = invoke("validate", str(spec))

    assert result.exit_code == 1
    assert result.stdout == (
        f"{spec.as_posix()}/spec/orders.yml:{line}: SPEC_ENCODING: not UTF-8 text: byte {offset + 3} "
        f"(line {line}, column {column + 3}) is 0xe9, which is not UTF-8. assay reads spec files as UTF-8; "
        "save the file as UTF-8 (for example `iconv -f <its encoding> -t UTF-8`) or remove the stray bytes.\n"
    )
    assert result.stderr == "1 problem found.\n"


def test_a_utf16_file_is_named_as_such(tmp_path):
    (tmp_path / "entities.yml").write_bytes("spec_version: 1\nentities: {}\n".encode("utf-16"))
    result = invoke("validate", "--json", str(tmp_path))
    assert result.exit_code == 1
    (problem,) = json.loads(result.stdout)["problems"]
    assert (problem["file"], problem["line"], problem["code"]) == ("entities.yml", 1, "SPEC_ENCODING")
    assert "it is saved as UTF-16 (it starts with a UTF-16 byte-order mark)" in problem["message"]


def test_an_unreadable_spec_file_is_a_diagnostic(tmp_path):
    shutil.copytree(EXAMPLE / "spec", tmp_path / "spec")
    os.symlink(tmp_path / "gone.yml", tmp_path / "spec" / "moved.yml")  # a link whose file was moved away
    result = invoke("validate", str(tmp_path / "spec"))
    assert result.exit_code == 1
    assert result.stdout == (
        f"{(tmp_path / 'spec').as_posix()}/moved.yml:1: SPEC_UNREADABLE: cannot be read (No such file or directory); "
        "make it a readable file or move it out of the spec directory.\n"
    )


def test_a_control_character_is_a_yaml_diagnostic_on_its_line(tmp_path):
    (tmp_path / "entities.yml").write_text("spec_version: 1\nentities:\n  a\x1b: {}\n", encoding="utf-8")
    result = invoke("validate", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{tmp_path.as_posix()}/entities.yml:3: SPEC_YAML: not valid YAML: the character U+001B is not allowed")
    # a NUL is said to be no engine's text, not to be escaped (decision 0972: the escape is refused too)
    (tmp_path / "entities.yml").write_text("spec_version: 1\nentities:\n  a\x00: {}\n", encoding="utf-8")
    result = invoke("validate", str(tmp_path))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{tmp_path.as_posix()}/entities.yml:3: SPEC_YAML: not valid YAML: the document holds the character U+0000 (NUL)")


def test_generate_with_a_bad_spec_names_each_problem_and_writes_nothing(tmp_path):
    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    orders = spec / "spec" / "orders.yml"
    orders.write_text(orders.read_text().replace("on_fail: flag", "on_fail: drop"))
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    before = _tree(project)
    result = invoke("generate", "dbt", "--spec", str(spec), "--project", str(project))
    assert result.exit_code == 1
    assert result.stdout.startswith(f"{spec.as_posix()}/spec/orders.yml:")
    assert "found in the spec; nothing was changed. Fix each line above" in result.stderr
    assert _tree(project) == before


# ----------------------------------------------------------------------------- 1: the project


def test_generate_into_a_directory_that_is_no_dbt_project(tmp_path):
    result = invoke("generate", "dbt", "--spec", str(EXAMPLE), "--project", str(tmp_path))
    assert result.exit_code == 1
    assert f"Error: {tmp_path} has no dbt_project.yml; point --project at a dbt project (or make one with `assay init DIR`)." in result.stderr


def test_a_conflicting_file_refuses_the_whole_generation(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    mine = project / "models" / "assay" / "sources.yml"
    mine.parent.mkdir(parents=True)
    mine.write_text("# mine\n")
    before = _tree(project)
    result = invoke("generate", "dbt", "--spec", str(EXAMPLE), "--project", str(project))
    assert result.exit_code == 1
    assert f"{mine}: exists and is not assay's" in result.stderr
    assert f"Error: 1 file that assay generates already exists in {project} and is not assay's; nothing was written. " \
        "Move it away or remove it" in result.stderr
    assert _tree(project) == before  # nothing half-written beside the conflict


def test_a_file_system_error_is_named_without_a_traceback(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    shutil.rmtree(project / "macros")
    (project / "macros").write_text("not a directory\n")  # generated macros cannot go under it
    result = invoke("generate", "dbt", "--spec", str(EXAMPLE), "--project", str(project))
    assert result.exit_code == 1
    assert "Error: cannot use " in result.stderr and "macros" in result.stderr
    assert "check that the path exists and that you may read and write it." in result.stderr


# ----------------------------------------------------------------------------- 1: the warehouse


def _postgres_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    # Port 1 on the loopback interface: nothing listens there, the connection is refused at once.
    write_dbt_skeleton(project, "shop", postgres_profile("shop", "127.0.0.1", 1, "assay", "secret", "warehouse"))
    built_results_node(project)
    return project


@pytest.mark.parametrize(
    "args",
    [
        ["check", "list"],
        ["checks", "some-run"],
        ["replay", "order", "--spec", str(EXAMPLE)],
        ["maintain", "--spec", str(EXAMPLE)],
        ["explain", "order", "O-1", "--spec", str(EXAMPLE)],
        ["report", "--json", "--spec", str(EXAMPLE)],
    ],
)
def test_a_warehouse_that_refuses_connections_is_named_with_its_cause(tmp_path, args):
    project = _postgres_project(tmp_path)
    result = invoke(*args, "--project", str(project))
    assert result.exit_code == 1
    # Long commands say what they are doing first (plain lines: the runner is no terminal).
    error = result.stderr[result.stderr.index("Error: "):]
    assert error.startswith(
        "Error: cannot connect to the warehouse of profile 'shop', target 'dev' (postgres at 127.0.0.1:1/warehouse, "
        f"from {project / 'profiles.yml'}): connection to server at \"127.0.0.1\", port 1 failed: Connection refused. "
    )
    assert "Check that the warehouse is running and reachable with the profile's settings" in result.stderr


def test_a_missing_profile_is_named(tmp_path, monkeypatch):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("someone_else"))
    built_results_node(project)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("DBT_PROFILES_DIR", raising=False)
    result = invoke("check", "list", "--project", str(project))
    assert result.exit_code == 1
    assert f"no profiles.yml defines the profile 'shop' that {project / 'dbt_project.yml'} names" in result.stderr
    assert "pass --profiles-dir with the folder that holds it." in result.stderr


def test_an_unknown_target_lists_the_known_ones(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    result = invoke("check", "list", "--project", str(project), "--target", "prod")
    assert result.exit_code == 1
    assert "profile 'shop' in " in result.stderr and "has no target 'prod' (its targets: 'dev'); pass --target" in result.stderr


def test_a_file_that_is_no_duckdb_database_is_a_warehouse_problem(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    (project / "warehouse.duckdb").write_text("these are my notes, not a database\n")
    result = invoke("check", "list", "--project", str(project))
    assert result.exit_code == 1
    assert "cannot connect to the warehouse of profile 'shop', target 'dev' (duckdb at warehouse.duckdb" in result.stderr


def test_a_warehouse_that_was_never_built(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    result = invoke("checks", "some-run", "--project", str(project))
    assert result.exit_code == 1
    assert f"the DuckDB file {project / 'warehouse.duckdb'} does not exist; run `dbt build` in the project first" in result.stderr


# ----------------------------------------------------------------------------- 2: checks did not pass


@pytest.fixture
def recorded(tmp_path) -> Path:
    """A dbt project whose DuckDB warehouse recorded two runs of two SQL checks: run-ok passed, run-bad did not."""
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema assay_meta")
    con.execute(
        "create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
        "check_position int, kind varchar, enforcement varchar, passed boolean, row_count int, check_spec varchar, "
        "measures varchar, recorded_at timestamp)"
    )
    spec = json.dumps({"bounds": {"on_failure": "block"}})
    for run, failing, at in (("run-ok", 0, "2026-12-01 10:00:00"), ("run-bad", 3, "2026-12-01 11:00:00")):
        con.execute(
            "insert into assay_meta.assay_check_results values (?, 'order', 'silver.order/no_refunds', 1, 'sql', 'block', ?, 5, ?, ?, ?),"
            " (?, 'order', 'silver.order/positive', 2, 'sql', 'block', true, 5, ?, '{\"failing_rows\": 0}', ?)",
            [run, failing == 0, spec, json.dumps({"failing_rows": failing}), at, run, spec, at],
        )
    con.close()
    return project


def test_checks_of_a_run_that_passed_exit_0(recorded):
    result = invoke("checks", "run-ok", "--project", str(recorded))
    assert result.exit_code == 0
    assert result.stdout == (
        "order: silver.order/no_refunds: passed: returned no rows, as expected\n"
        "order: silver.order/positive: passed: returned no rows, as expected\n"
    )


def test_checks_of_a_run_whose_check_failed_exit_2(recorded):
    result = invoke("checks", "run-bad", "--project", str(recorded))
    assert result.exit_code == 2
    assert result.stdout.splitlines()[0] == "order: silver.order/no_refunds: FAILED: returned 3 rows"
    assert result.stderr == "1 of 2 checks of run run-bad did not pass: order: silver.order/no_refunds.\n"
    as_json = invoke("checks", "run-bad", "--json", "--project", str(recorded))
    assert as_json.exit_code == 2
    assert [r["passed"] for r in json.loads(as_json.stdout)] == [False, True]


def test_checks_of_an_unknown_run_exit_1_and_say_where_to_look(recorded):
    result = invoke("checks", "no-such-run", "--project", str(recorded))
    assert result.exit_code == 1
    assert "no check results are recorded for run no-such-run; check the run id" in result.stderr
    assert "`assay check list`" in result.stderr


def _stopped_invocation(project: Path, invocation: str, args: dict | None = None) -> None:
    """target/run_results.json of a dbt build a `fail` rule stopped on the staged model."""
    (project / "target").mkdir(exist_ok=True)
    (project / "target" / "run_results.json").write_text(json.dumps({
        "metadata": {"invocation_id": invocation}, "args": args or {},
        "results": [
            {"unique_id": "model.shop.order__staged", "status": "success"},
            {"unique_id": "test.shop.assay_fail_rule__order__amount_positive", "status": "fail"},
            {"unique_id": "model.shop.order", "status": "skipped"},
        ]}))


def test_a_run_that_stopped_before_its_checks_is_named_not_mistaken_for_a_typo(recorded):
    _stopped_invocation(recorded, "inv-stopped-1234")
    result = invoke("checks", "inv-stopped", "--project", str(recorded))
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: run inv-stopped-1234 (dbt's last invocation) recorded no check results: it stopped before any table's checks "
        "ran (assay_fail_rule__order__amount_positive failed); target/run_results.json says more, and `assay check "
        "list` lists the runs that recorded results.\n")
    # the latest recorded run is not called the latest build
    latest = invoke("checks", "--project", str(recorded))
    assert latest.exit_code == 2
    assert latest.stderr.splitlines()[0] == (
        "run run-bad (the latest that recorded check results; dbt's last invocation inv-stopped-1234 recorded none: "
        "assay_fail_rule__order__amount_positive failed)")


def _passed_invocation(project: Path, invocation: str, which: str) -> None:
    """target/run_results.json of a dbt invocation in which nothing failed."""
    (project / "target").mkdir(exist_ok=True)
    (project / "target" / "run_results.json").write_text(json.dumps({
        "metadata": {"invocation_id": invocation}, "args": {"which": which},
        "results": [{"unique_id": "model.shop.order__staged", "status": "success"},
                    {"unique_id": "model.shop.order", "status": "success"}]}))


def test_a_later_build_that_passed_is_the_latest_not_an_older_failed_run(recorded):
    """dbt's last build passed and recorded nothing (its tables have no checks that record every
    build): the failures of the older run are not the project's state, and not "the latest"; a
    `dbt build && assay checks` step must not keep failing on a problem already fixed."""
    _passed_invocation(recorded, "inv-clean-5678", "build")
    latest = invoke("checks", "--project", str(recorded))
    assert latest.exit_code == 1, latest.output
    assert latest.stderr == (
        "Error: run inv-clean-5678 (dbt's last build, the latest) passed and recorded no check results: it built no "
        "table that records checks. The latest run that recorded results is run-bad (`assay checks run-bad` prints "
        "them).\n")
    with_json = invoke("checks", "--json", "--project", str(recorded))
    assert (with_json.exit_code, with_json.stdout) == (1, "[]\n")
    # `dbt source freshness` (or any invocation that builds no model) after the build is not a build
    _passed_invocation(recorded, "inv-fresh-9999", "source")
    after = invoke("checks", "--project", str(recorded))
    assert after.exit_code == 2 and after.stderr.splitlines()[0] == "run run-bad (the latest)", after.output


def test_a_stopped_invocation_of_another_target_is_not_named(recorded):
    """`dbt build --target ci` stopped last; `assay checks` reads the profile's default target,
    whose warehouse that invocation never touched: it must not be named as this warehouse's run."""
    profiles = recorded / "profiles.yml"
    text = profiles.read_text()
    default = yaml.safe_load(text)["shop"]["target"]
    _stopped_invocation(recorded, "inv-stopped-1234", {"target": "ci"})
    result = invoke("checks", "inv-stopped", "--project", str(recorded))
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no check results are recorded for run inv-stopped"), result.stderr
    latest = invoke("checks", "--project", str(recorded))
    assert latest.stderr.splitlines()[0] == "run run-bad (the latest)", latest.stderr
    # named with the default target spelled out, it is this warehouse's invocation again
    _stopped_invocation(recorded, "inv-stopped-1234", {"target": default})
    named = invoke("checks", "inv-stopped", "--project", str(recorded))
    assert "run inv-stopped-1234 (dbt's last invocation) recorded no check results" in named.stderr, named.stderr


def test_check_list_lists_and_exits_0_even_when_checks_failed(recorded):
    result = invoke("check", "list", "--project", str(recorded), "--output", "json")
    assert result.exit_code == 0
    assert [(i["run"], i["check"], i["outcome"]) for i in json.loads(result.stdout)] == [
        ("run-bad", "silver.order/positive", "passed"),
        ("run-bad", "silver.order/no_refunds", "FAILED"),
        ("run-ok", "silver.order/positive", "passed"),
        ("run-ok", "silver.order/no_refunds", "passed"),
    ]


def test_report_with_json_and_out_is_a_usage_error_and_writes_nothing(tmp_path):
    # --json prints instead of writing the page: an --out beside it used to be ignored (exit 0, no
    # file), which left the operator believing the page was written. Refused before any warehouse
    # is read, so no build is needed here.
    out = tmp_path / "page.html"
    result = invoke("report", "--json", "--out", str(out), "--project", str(tmp_path))
    assert result.exit_code == 3
    assert "drop --json to write the page, or --out to print the numbers" in result.stderr
    assert result.stdout == "" and not out.exists()


@pytest.mark.parametrize("args", [("validate", "{spec}/spec/customers.yml"), ("validate", "--spec", "{spec}/assay.yml"),
                                  ("plan", "{spec}/assay.yml", "--spec", "{spec}"),
                                  ("generate", "dbt", "--spec", "{spec}/spec/orders.yml")])
def test_a_spec_file_given_for_the_spec_directory_says_which_directory_to_pass(args):
    # A spec is the directory holding assay.yml; a file of it (the settings or an entity file) is
    # the usual slip, and the answer names the directory, not only that a file is no directory.
    result = invoke(*(a.format(spec=EXAMPLE) for a in args))
    assert result.exit_code == 3
    assert f"is a file; a spec is the directory that holds assay.yml: pass {EXAMPLE}" in result.stderr.replace("\n", " ")


def test_plan_refuses_an_old_spec_folder_that_holds_no_spec(tmp_path):
    """A mistyped deployed-spec path (an empty folder, a checkout's root with the spec below it)
    planned every entity as added, exit 0, and `--data` built it (an outside tester, session 44)."""
    import shutil

    spec = tmp_path / "shop"
    shutil.copytree(Path(__file__).resolve().parents[2] / "examples" / "shop", spec)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("plan", str(empty), "--spec", str(spec))
    assert result.exit_code == 1, result.output
    assert f"{empty} holds no spec documents (*.yml, *.yaml), so it is not the old spec" in result.stderr
    assert "entity_added" not in result.output
