"""Issue 19's smaller defects, each with the command that showed it: exit codes that said "fine" for
a mistake, JSON that was not what a script can use, and help texts that misled.

The warehouse here is a DuckDB file holding the meta tables the dbt package writes (no dbt run):
the shapes of `assay checks --json` and `assay check list --json` are those of the recorded rows.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli.main import cli, run_reporting_errors
from assay.scaffold import duckdb_profile, write_dbt_skeleton
from tests.cli.test_check_rows_cmd import built_results_node

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def test_a_missing_project_is_a_usage_error_for_every_command(tmp_path):
    missing = str(tmp_path / "nope")
    for args in (["generate", "dbt"], ["generate", "sqlmesh"], ["report"], ["table", "list"], ["checks"]):
        result = invoke(*args, "--project", missing)
        assert result.exit_code == 3, (args, result.output)
        assert "does not exist" in result.output, (args, result.output)


def test_validate_of_a_folder_without_spec_documents_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = invoke("validate", "--spec", str(empty))
    assert result.exit_code == 1, result.output
    assert "holds no spec documents" in result.output


def test_ctrl_c_exits_130_without_aborted(capsys):
    def interrupted():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            import click

            raise click.Abort() from exc

    assert run_reporting_errors(interrupted) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Aborted!" not in err


@pytest.fixture()
def recorded(tmp_path) -> Path:
    """A dbt project on DuckDB whose meta schema holds one run's results, as the package records them."""
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema assay_meta")
    con.execute("create table assay_meta.assay_check_results (run_id varchar, table_name varchar, check_id varchar, "
                "check_position integer, kind varchar, enforcement varchar, passed boolean, row_count bigint, "
                "check_spec varchar, measures varchar, recorded_at timestamp)")
    spec = json.dumps({"bounds": {"min_rows": 1}, "columns": [], "domain": None, "gap_scale": None, "orderable": None, "types": []})
    con.execute("insert into assay_meta.assay_check_results values ('r-1', 'order', 'ENOUGH_ORDERS', 0, 'row_expectation', "
                "'advisory', true, 5, ?, '{\"rows\": 5}', timestamp '2026-12-01 10:00:00.5')", [spec])
    con.close()
    return project


def test_checks_json_items_carry_their_table_in_scope(recorded):
    result = invoke("checks", "--project", str(recorded), "--spec", str(EXAMPLE), "--json")
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)
    assert [(i["scope"], i["check_id"], i["passed"]) for i in items] == [("order", "ENOUGH_ORDERS", True)]


def test_check_list_json_has_numbers_or_null_and_iso_timestamps(recorded):
    result = invoke("check", "list", "--project", str(recorded), "--spec", str(EXAMPLE), "--json")
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)
    assert item["rows"] is None  # a declared check counts no rows: null, never ""
    stamp = dt.datetime.fromisoformat(item["finished_at"].replace("Z", "+00:00"))
    assert item["finished_at"] == "2026-12-01T10:00:00.500000Z" and stamp.tzinfo is not None
    text = invoke("check", "list", "--project", str(recorded), "--spec", str(EXAMPLE))
    assert "2026-12-01T10:00:00.500000Z" in text.stdout


def test_help_texts_name_no_decisions_and_no_dbt_only_verbs():
    for args in (["report"], ["explain"], ["maintain"], ["replay"], ["checks"], ["check", "list"], ["check", "rows"],
                 ["table", "list"], ["table", "get"], ["generate", "sqlmesh"]):
        text = invoke(*args, "--help").stdout
        assert "decision" not in text.lower(), (args, text)
        assert "dbt run " not in text and "dbt run." not in text, (args, text)


def test_a_named_profiles_dir_without_the_profile_is_refused(recorded, tmp_path, monkeypatch):
    elsewhere = tmp_path / "profiles"
    elsewhere.mkdir()
    (elsewhere / "profiles.yml").write_text("other:\n  target: dev\n  outputs: {dev: {type: duckdb, path: x.duckdb}}\n")
    # --profiles-dir names the folder dbt reads: a profile only beside the project is not used instead
    result = invoke("checks", "--project", str(recorded), "--profiles-dir", str(elsewhere))
    assert result.exit_code == 1, result.output
    assert f"no profiles.yml defines the profile 'shop'" in result.output and str(elsewhere / "profiles.yml") in result.output
    assert str(recorded / "profiles.yml") not in result.output
    # DBT_PROFILES_DIR, when the project holds no profiles.yml: that folder, not ~/.dbt
    (recorded / "profiles.yml").unlink()
    monkeypatch.setenv("DBT_PROFILES_DIR", str(elsewhere))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / ".dbt").mkdir(parents=True)
    (tmp_path / "home" / ".dbt" / "profiles.yml").write_text(
        f"shop:\n  target: dev\n  outputs: {{dev: {{type: duckdb, path: {recorded / 'warehouse.duckdb'}}}}}\n")
    result = invoke("checks", "--project", str(recorded))
    assert result.exit_code == 1, result.output
    assert "DBT_PROFILES_DIR" in result.output and str(elsewhere / "profiles.yml") in result.output


def test_dbt_profiles_dir_and_dbt_target_are_read_as_dbt_reads_them(recorded, tmp_path, monkeypatch):
    """An outside tester (session 40): `DBT_PROFILES_DIR=alt dbt build` and `DBT_TARGET=dev dbt build`
    wrote another warehouse than the one the project's own profiles.yml names first, and every
    command then read that one and said "never built". dbt reads the variable before the folder it
    runs in, and DBT_TARGET before the profile's default: so does assay."""
    import json as _json

    elsewhere = tmp_path / "profiles"
    elsewhere.mkdir()
    # the variable's folder names the built warehouse; the project's own profile names an empty one
    (elsewhere / "profiles.yml").write_text(
        f"shop:\n  target: dev\n  outputs: {{dev: {{type: duckdb, path: {recorded / 'warehouse.duckdb'}}}}}\n")
    (recorded / "profiles.yml").write_text(
        f"shop:\n  target: dev\n  outputs: {{dev: {{type: duckdb, path: {tmp_path / 'missing.duckdb'}}},"
        f" built: {{type: duckdb, path: {recorded / 'warehouse.duckdb'}}}}}\n")
    monkeypatch.setenv("DBT_PROFILES_DIR", str(elsewhere))
    result = invoke("checks", "r-1", "--json", "--project", str(recorded))
    assert result.exit_code in (0, 2) and _json.loads(result.stdout), result.output
    # without the variable the project's own profile is read: its default target's file is missing
    monkeypatch.delenv("DBT_PROFILES_DIR")
    assert invoke("checks", "r-1", "--project", str(recorded)).exit_code == 1
    # DBT_TARGET picks the output as --target would
    monkeypatch.setenv("DBT_TARGET", "built")
    result = invoke("checks", "r-1", "--json", "--project", str(recorded))
    assert result.exit_code in (0, 2) and _json.loads(result.stdout), result.output


def test_a_grammar_error_does_not_hide_the_other_errors_of_its_entity(tmp_path):
    import shutil

    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    entities = spec / "spec" / "entities.yml"
    text = entities.read_text()
    text = text.replace("    key: [customer_id]\n", "    key: [customer_id]\n    colour: blue\n", 1)
    text = text.replace("      tier: {type: int}", "      tier: {type: integr}")
    entities.write_text(text)
    result = invoke("validate", "--spec", str(spec))
    assert result.exit_code == 1, result.output
    lines = [l for l in result.stdout.splitlines() if "entities.yml" in l]
    assert any("SPEC_GRAMMAR: `colour` is not a key of entities.customer" in l for l in lines), lines
    assert any("integr" in l for l in lines), lines  # the unknown type, in the same entity, is reported too


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            continue
    return out


def _ignored_signals(pid: int) -> str:
    """The SigIgn mask /proc reports for `pid` (bit 1: SIGINT), for a failure's message."""
    try:
        return next(ln for ln in Path(f"/proc/{pid}/status").read_text().splitlines() if ln.startswith("SigIgn"))
    except (OSError, StopIteration):
        return "unknown"


def _dbt_build_child(pid: int) -> set[int]:
    """The children of `pid` running `dbt build` (empty until the demo reaches its build)."""
    found = set()
    for child in _children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"build" in cmdline:
            found.add(child)
    return found


@pytest.mark.slow
def test_ctrl_c_in_the_demo_stops_dbt_and_exits_130(tmp_path):
    """SIGINT to assay alone (as `kill -INT` would send it) while dbt builds: dbt is stopped too.
    Every wait has a deadline: the demo's output goes to a file, the build is found in /proc."""
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DO_NOT_TRACK": "1"}
    err = tmp_path / "stderr.txt"
    with err.open("w") as sink:
        # As from a shell: SIGINT at its default. A pytest worker may hold it ignored (the suite's
        # fast loop did, three runs in a row, session 37), and an ignored SIGINT is inherited: the
        # demo then never saw the signal and finished with exit 0.
        proc = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "demo", str(tmp_path / "demo")],
                                stdout=subprocess.DEVNULL, stderr=sink, text=True, env=env,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.time() + 120
        children: set[int] = set()
        while not children and proc.poll() is None and time.time() < deadline:
            children = _dbt_build_child(proc.pid)
            time.sleep(0.2)
        assert children, "dbt build never started: " + err.read_text()[-2000:]
        time.sleep(1.0)
        ignored = _ignored_signals(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, f"SigIgn of the demo: {ignored}; stderr: {err.read_text()[-1000:]}"
        assert "interrupted" in err.read_text()
        assert not [c for c in children if Path(f"/proc/{c}").exists()], "the dbt child outlived assay"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_generate_sqlmesh_says_which_checks_of_read_only_tables_it_skips(tmp_path):
    import shutil

    from assay.api_sqlmesh import duckdb_config

    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    (spec / "spec" / "tables.yml").write_text(
        "tables_version: 1\ntables:\n  bronze.raw_customers:\n    grain: [id]\n    checks:\n"
        "      - {check_id: few_rows, kind: row_expectation, enforcement: advisory, max_rows: 100}\n")
    project = tmp_path / "sm"
    project.mkdir()
    (project / "config.yaml").write_text(duckdb_config())
    result = invoke("generate", "sqlmesh", "--project", str(project), "--spec", str(spec))
    assert result.exit_code == 0, result.output
    assert "warning: UNSUPPORTED_BY_TARGET: skipped on sqlmesh: advisory check `FEW_ROWS` of `bronze.raw_customers`" in result.stderr
    as_json = invoke("generate", "sqlmesh", "--project", str(project), "--spec", str(spec), "--json")
    skipped = json.loads(as_json.stdout)["skipped_checks"]
    assert [(w["file"], w["code"]) for w in skipped] == [("spec/tables.yml", "UNSUPPORTED_BY_TARGET")]
