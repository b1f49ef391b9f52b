"""One CLI (DESIGN.md section 5): `--project` (default: the current directory) and the spec found
through what `assay generate` recorded; the spec is the directory holding assay.yml; `--json`
everywhere; `assay checks` without a run id; generated files the user edited are not overwritten
without `--force`; progress on stderr as plain lines when it is no terminal. Run through Click as a
user would, without dbt (the warehouses here are written by hand)."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.api_sqlmesh import duckdb_config
from assay.cli.common import Progress
from assay.cli.main import cli
from assay.scaffold import duckdb_profile, postgres_profile, write_dbt_skeleton
from tests.cli.test_check_rows_cmd import built_results_node

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def invoke(*args: str, cwd: Path | None = None):
    with pytest.MonkeyPatch.context() as mp:
        if cwd is not None:
            mp.chdir(cwd)
        result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    return result


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _manifest(project: Path) -> dict:
    return json.loads((project / ".assay" / "manifest.json").read_text())


@pytest.fixture
def separate(tmp_path) -> tuple[Path, Path]:
    """A spec (with assay.yml) beside a dbt project, generated once with --spec: (spec, project)."""
    spec = tmp_path / "quality"
    shutil.copytree(EXAMPLE, spec)
    project = tmp_path / "warehouse"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop", str(project / "warehouse.duckdb")))
    result = invoke("generate", "dbt", "--spec", str(spec), "--project", str(project))
    assert result.exit_code == 0, result.output
    return spec, project


# ----------------------------------------------------------------------------- the recorded spec


def test_generate_records_the_spec_relative_to_the_project(separate):
    spec, project = separate
    assert _manifest(project)["spec_dir"] == "../quality"


def test_generate_says_where_tables_land_and_what_to_run_next(separate, tmp_path):
    spec, project = separate
    result = invoke("generate", "dbt", "--project", "warehouse", cwd=tmp_path)  # the recorded spec, no --spec
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("assay generate: 0 written, ") and "(2 entities, spec quality " in lines[0]
    # The skeleton's generate_schema_name keeps the custom schema names as they are.
    assert lines[1] == ("tables land in silver (entities, staged and reject tables), gold (mart_data_quality), "
                        "assay_meta (check results, events); bronze is read from bronze")
    assert lines[2].startswith("next: cd warehouse && dbt deps && dbt build")
    assert "dbt deps --project-dir warehouse --profiles-dir warehouse" in lines[2]


def test_without_the_override_tables_land_in_dbts_default_schemas(separate):
    spec, project = separate
    (project / "macros" / "generate_schema_name.sql").unlink()
    result = invoke("generate", "dbt", "--project", str(project))
    assert result.exit_code == 0, result.output
    assert "tables land in main_silver (entities, staged and reject tables), main_gold (mart_data_quality), main_assay_meta" in result.stdout
    assert "dbt's default prefixes the target schema" in result.stdout
    assert "add macros/generate_schema_name.sql as `assay init` writes it" in result.stdout


def test_a_users_own_override_is_named(separate):
    spec, project = separate
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) -%}\n  prod_{{ custom_schema_name }}\n{%- endmacro %}\n")
    result = invoke("generate", "dbt", "--project", str(project))
    assert result.exit_code == 0, result.output
    assert f"tables land where your generate_schema_name ({project}/macros/generate_schema_name.sql) puts" in result.stdout


def test_every_command_finds_the_recorded_spec(separate):
    spec, project = separate
    assert invoke("validate", cwd=project).stdout.startswith("ok: 2 entities, ")
    assert invoke("validate", "--project", str(project)).stdout.startswith("ok: 2 entities, ")
    plan = invoke("plan", str(spec), "--project", str(project))
    assert plan.exit_code == 0 and plan.stdout.splitlines()[0] == "no changes"
    # The warehouse commands get past the spec to the warehouse (never built here).
    for args in (["explain", "order", "O-1"], ["report", "--json"], ["maintain", "--json"], ["replay", "order"]):
        result = invoke(*args, "--project", str(project))
        assert result.exit_code == 1, (args, result.output)
        assert "the DuckDB file" in result.stderr and "does not exist" in result.stderr, (args, result.stderr)


def test_a_moved_spec_says_what_to_pass(separate, tmp_path):
    spec, project = separate
    spec.rename(tmp_path / "elsewhere")
    result = invoke("validate", "--project", str(project))
    assert result.exit_code == 1
    assert f"{project}/.assay/manifest.json says the spec is in {tmp_path}/quality, which does not exist" in result.stderr
    assert "pass --spec with the directory that holds assay.yml" in result.stderr


def test_explain_report_and_maintain_fall_back_to_the_projects_spec_folder(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    shutil.copytree(EXAMPLE / "spec", project / "spec")
    for args in (["explain", "order", "O-1"], ["report"], ["maintain"]):
        result = invoke(*args, "--project", str(project))
        assert result.exit_code == 1 and "does not exist; run `dbt build`" in result.stderr, (args, result.output)
    assert invoke("explain", "nobody", "x", "--project", str(project)).exit_code == 3  # it did read spec/


# ----------------------------------------------------------------------------- the spec is the directory holding assay.yml


def test_a_subfolder_of_a_spec_is_refused_with_the_directory_to_pass(tmp_path):
    spec = tmp_path / "shop"
    shutil.copytree(EXAMPLE, spec)
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    before = _tree(project)
    for args in (["validate", "--spec", "shop/spec"], ["validate", "shop/spec"],
                 ["generate", "dbt", "--spec", "shop/spec", "--project", "proj"]):
        result = invoke(*args, cwd=tmp_path)
        assert result.exit_code == 3, (args, result.output)
        assert result.stderr == (
            "Error: shop/spec is inside the spec in shop (its assay.yml sets the schemas and the spec folders, "
            "which would be ignored); pass --spec shop, the directory that holds assay.yml.\n"
        )
    assert _tree(project) == before
    # `assay plan`'s earlier spec is a spec of its own: --spec would not help (an outside tester, session 48)
    shutil.copytree(EXAMPLE / "spec", spec / "spec_v1")
    result = invoke("plan", "spec_v1", "--spec", ".", cwd=spec)
    assert result.exit_code == 3, result.output
    assert result.stderr == (
        "Error: spec_v1 is inside the spec in . (its assay.yml sets the schemas and the spec folders, which would be "
        "ignored); OLD_SPEC must be a spec of its own: copy the earlier spec, with its assay.yml, to a directory "
        "outside . (e.g. a checkout of the last release) and pass that.\n"), result.stderr


def test_validate_in_a_dbt_project_root_says_what_to_do_instead(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    result = invoke("validate", cwd=project)
    assert result.exit_code == 3
    assert result.stdout == ""  # no problems reported for dbt_project.yml
    assert result.stderr == (
        "Error: . is a dbt project, not an assay spec: it has no assay.yml and `assay generate` recorded no spec "
        "for it in .assay/manifest.json. Pass --spec with the directory that holds your assay.yml (it is "
        "remembered by the next `assay generate`), or make an example project with `assay init DIR`.\n"
    )
    explicit = invoke("validate", "--spec", str(project))
    assert explicit.exit_code == 3 and f"{project} is a dbt project, not an assay spec: it has no assay.yml." in explicit.stderr


def test_generate_without_a_spec_anywhere_says_what_to_pass(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    result = invoke("generate", "dbt", "--project", str(project))
    assert result.exit_code == 3
    assert "is a dbt project, not an assay spec" in result.stderr and "Pass --spec with the directory" in result.stderr


def test_the_spec_given_twice_is_a_usage_error(tmp_path):
    assert invoke("validate", str(EXAMPLE), "--spec", str(EXAMPLE)).exit_code == 3
    both = invoke("plan", str(EXAMPLE), str(EXAMPLE), "--spec", str(EXAMPLE))
    assert both.exit_code == 3 and "pass the new spec once" in both.stderr
    # the positional forms of before still work
    assert invoke("plan", str(EXAMPLE), str(EXAMPLE)).stdout.splitlines()[0] == "no changes"
    assert invoke("validate", str(EXAMPLE)).exit_code == 0


def test_init_then_generate_needs_no_spec_flag(tmp_path):
    assert invoke("init", "shop", cwd=tmp_path).exit_code == 0
    result = invoke("generate", "dbt", "--project", "shop", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert _manifest(tmp_path / "shop")["spec_dir"] == "."
    assert invoke("validate", cwd=tmp_path / "shop").exit_code == 0


def test_init_writes_an_absolute_duckdb_path_and_fresh_ingestion_times(tmp_path):
    result = invoke("init", "shop", cwd=tmp_path)
    assert result.exit_code == 0
    profile = (tmp_path / "shop" / "profiles.yml").read_text()
    assert f"path: {(tmp_path / 'shop' / 'warehouse.duckdb').resolve().as_posix()}\n" in profile
    import datetime as dt

    from assay.runtime.csvnull import read_csv

    cols, rows = read_csv(tmp_path / "shop" / "bronze" / "raw_orders.csv")
    stamps = [dt.datetime.fromisoformat(r[cols.index("_ingested_at")].replace("Z", "+00:00")) for r in rows]
    age = dt.datetime.now(dt.timezone.utc) - max(stamps)
    assert dt.timedelta(minutes=59) < age < dt.timedelta(minutes=65)
    assert max(stamps) - min(stamps) == dt.timedelta(hours=1)  # the gap between the two loads is kept
    assert "next: load bronze/*.csv into the bronze schema (docs/quickstart.md), then assay generate dbt --project shop" in result.stdout


# ----------------------------------------------------------------------------- edited generated files


def test_an_edited_generated_file_is_not_overwritten_without_force(separate):
    spec, project = separate
    model = project / "models" / "assay" / "mart_data_quality.sql"
    model.write_text(model.read_text() + "-- my tweak\n")
    before = _tree(project)
    result = invoke("generate", "dbt", "--project", str(project))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{model}: edited since assay generated it\n" in result.stderr
    assert ("Error: 1 generated file was edited since assay wrote it; nothing was written. Generated files are rewritten "
            "from the spec, so put the change in the spec (or in a file of your own) and run `assay generate` again; "
            "pass --force to overwrite the edits.") in result.stderr
    assert _tree(project) == before

    forced = invoke("generate", "dbt", "--project", str(project), "--force")
    assert forced.exit_code == 0, forced.output
    assert "overwrote your edits of models/assay/mart_data_quality.sql (--force)" in forced.stdout
    assert "-- my tweak" not in model.read_text()
    assert invoke("generate", "dbt", "--project", str(project)).exit_code == 0  # owned and pristine again


def test_an_edited_file_the_spec_no_longer_produces_is_not_deleted(tmp_path):
    from assay.artifacts import write_project

    write_project(tmp_path, {"a.sql": "select 1\n", "b.sql": "select 2\n"}, "dbt", "f1")
    (tmp_path / "b.sql").write_text("select 2 -- mine\n")
    report = write_project(tmp_path, {"a.sql": "select 1\n"}, "dbt", "f2")
    assert report.refused and report.modified == ["b.sql"] and report.removed == []
    assert (tmp_path / "b.sql").read_text() == "select 2 -- mine\n"
    forced = write_project(tmp_path, {"a.sql": "select 1\n"}, "dbt", "f2", force=True)
    assert forced.removed == ["b.sql"] and not (tmp_path / "b.sql").exists()


def test_sqlmesh_generation_refuses_edits_too(tmp_path):
    project = tmp_path / "sm"
    project.mkdir()
    (project / "config.yaml").write_text(duckdb_config(), encoding="utf-8")
    assert invoke("generate", "sqlmesh", "--spec", str(EXAMPLE), "--project", str(project)).exit_code == 0
    owned = sorted(_manifest(project)["files"])
    edited = project / owned[-1]
    edited.write_text(edited.read_text() + "\n-- mine\n")
    refused = invoke("generate", "sqlmesh", "--project", str(project))
    assert refused.exit_code == 1 and f"{edited}: edited since assay generated it" in refused.stderr
    assert "-- mine" in edited.read_text()
    assert invoke("generate", "sqlmesh", "--project", str(project), "--force").exit_code == 0
    assert "-- mine" not in edited.read_text()


# ----------------------------------------------------------------------------- checks and check list


@pytest.fixture
def recorded(tmp_path) -> Path:
    """A warehouse that recorded two runs: an older one that passed, the latest one that did not."""
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
    runs = (("4f1c2a9e-0000-4000-8000-000000000001", 0, "2026-12-01 10:00:00"),
            ("4f1c77d0-0000-4000-8000-000000000002", 3, "2026-12-01 11:00:00"))
    for run, failing, at in runs:
        con.execute(
            "insert into assay_meta.assay_check_results values (?, 'order', 'silver.order/no_refunds', 1, 'sql', 'block', ?, 5, ?, ?, ?)",
            [run, failing == 0, spec, json.dumps({"failing_rows": failing}), at],
        )
    con.close()
    return project


def test_checks_without_a_run_id_reads_the_latest_run(recorded):
    result = invoke("checks", "--project", str(recorded))
    assert result.exit_code == 2
    assert result.stdout == "order: silver.order/no_refunds: FAILED: returned 3 rows\n"
    assert result.stderr.splitlines()[0] == "run 4f1c77d0-0000-4000-8000-000000000002 (the latest)"


def test_checks_takes_the_short_run_id_check_list_shows(recorded):
    listed = invoke("check", "list", "--project", str(recorded))
    short = listed.stdout.splitlines()[-1].split()[0]
    assert short == "4f1c2a9e"
    result = invoke("checks", short, "--project", str(recorded))
    assert result.exit_code == 0, result.output
    assert result.stdout == "order: silver.order/no_refunds: passed: returned no rows, as expected\n"
    assert result.stderr == "run 4f1c2a9e-0000-4000-8000-000000000001\n"
    ambiguous = invoke("checks", "4f1c", "--project", str(recorded))
    assert ambiguous.exit_code == 3
    assert "'4f1c' is the start of 2 recorded runs" in ambiguous.stderr and "give more of the run id" in ambiguous.stderr


def test_checks_with_nothing_recorded_says_what_to_run(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    built_results_node(project)
    duckdb.connect(str(project / "warehouse.duckdb")).close()
    result = invoke("checks", "--project", str(project))
    assert result.exit_code == 1
    # the warehouse read is named by its profile and target: a build of another one is the usual cause
    assert "no check results are recorded in the warehouse of profile 'shop', target 'dev' (duckdb at" in " ".join(result.stderr.split())
    listed = invoke("check", "list", "--project", str(project))
    assert listed.exit_code == 0 and "no check results recorded yet in the warehouse of profile 'shop', target 'dev'" in listed.stdout
    # The build command of this project, where it is to be run.
    assert f"run `cd {project} && dbt build`" in " ".join(result.stderr.split())


def test_check_list_takes_json_and_keeps_output_json_hidden(recorded):
    new = invoke("check", "list", "--project", str(recorded), "--json")
    old = invoke("check", "list", "--project", str(recorded), "--output", "json")
    assert new.exit_code == old.exit_code == 0
    assert json.loads(new.stdout) == json.loads(old.stdout)
    assert [i["run"] for i in json.loads(new.stdout)][0] == "4f1c77d0-0000-4000-8000-000000000002"
    helptext = invoke("check", "list", "--help").stdout
    assert "--json" in helptext and "--output" not in helptext


def test_checks_reads_only_the_recorded_specs_meta_schema(recorded, tmp_path):
    spec = tmp_path / "other"
    shutil.copytree(EXAMPLE, spec)
    settings = spec / "assay.yml"
    settings.write_text(settings.read_text().replace("meta: assay_meta", "meta: other_meta"))
    result = invoke("checks", "--project", str(recorded), "--spec", str(spec))
    # the results of the build's own meta schema are not read for this spec's; the spec moved it
    # since that build, which is said rather than answered as "no check results" (session 40)
    said = " ".join(result.stderr.split())
    assert result.exit_code == 1 and "wrote the check results into `assay_meta`, but the spec's meta schema is now `other_meta`" in said
    assert "passed" not in result.stdout


def test_without_a_spec_only_the_schema_the_build_recorded_is_read(recorded):
    """No spec recorded: the schema comes from dbt's manifest, then from the schemas `assay
    generate` recorded; with neither, the commands refuse and say to pass --spec (decision 0913).
    A look-alike schema holding a failing check is never read."""
    con = duckdb.connect(str(recorded / "warehouse.duckdb"))
    con.execute("create schema x_assay_meta")
    con.execute("create table x_assay_meta.assay_check_results as select * from assay_meta.assay_check_results")
    con.execute("update x_assay_meta.assay_check_results set check_id = 'FORGED', passed = false")
    con.close()
    listed = invoke("check", "list", "--json", "--project", str(recorded))
    assert listed.exit_code == 0 and "FORGED" not in listed.stdout and len(json.loads(listed.stdout)) == 2
    (recorded / "target" / "manifest.json").unlink()
    refused = invoke("checks", "--json", "--project", str(recorded))
    # with --json, the refusal is JSON on stdout (session 41), its sentence on stderr as well
    assert refused.exit_code == 1 and json.loads(refused.stdout)["ok"] is False
    assert "pass --spec with the directory holding assay.yml" in json.loads(refused.stdout)["error"]
    assert "pass --spec with the directory holding assay.yml" in refused.stderr and "FORGED" not in refused.output
    (recorded / ".assay").mkdir()
    (recorded / ".assay" / "manifest.json").write_text(json.dumps({"files": {}, "schemas": {"meta": "assay_meta"}}))
    listed = invoke("check", "list", "--json", "--project", str(recorded))
    assert listed.exit_code == 0 and "FORGED" not in listed.stdout and len(json.loads(listed.stdout)) == 2


# ----------------------------------------------------------------------------- replay --json


def _reject_warehouse(tmp_path):
    """A dbt project whose warehouse holds the open reject row o-404 of `order` and an empty
    bronze.raw_orders; (the project, an open connection the caller closes)."""
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", duckdb_profile("shop"))
    con = duckdb.connect(str(project / "warehouse.duckdb"))
    con.execute("create schema silver; create schema bronze")
    con.execute('create table silver."order__reject" (reject_id varchar, _source_row_id varchar, _load_id varchar, last_seen timestamp, '
                'raw varchar, key_values varchar, resolved_at timestamp, source_relation varchar)')
    con.execute("""insert into silver."order__reject" values ('r-404', 'o-404', 'l1', '2026-03-01 10:00:00',
                   '{"order_ref": "O-404", "price": "-1"}', '{"order_id": "O-404"}', null, 'raw_orders')""")
    con.execute("create table bronze.raw_orders (_load_id varchar, _ingested_at varchar, _source_row_id varchar, order_ref varchar, price varchar)")
    return project, con


def test_replay_dry_run_as_json_and_in_the_singular(tmp_path):
    project, con = _reject_warehouse(tmp_path)
    con.close()
    args = ["replay", "order", "--spec", str(EXAMPLE), "--project", str(project), "--dry-run"]
    as_json = invoke(*args, "--json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == {"entity": "order", "dry_run": True, "in_bronze": 0, "needs_full_refresh": 0,
                                          "redelivered": {"raw_orders": 1}, "unrecoverable": 0, "superseded": 0}
    assert as_json.stderr == ""  # --json: no progress chatter
    text = invoke(*args)
    assert text.stdout.splitlines() == [
        "order: 0 open reject rows are still in bronze and re-judged by the next build",
        "order: would re-deliver 1 row into bronze.raw_orders with _load_id '__replay__'",
    ]
    assert text.stderr.splitlines() == [
        "assay replay [1/3] reading the spec",
        "assay replay [2/3] connecting to the warehouse",
        "assay replay [3/3] counting order's open reject rows",
    ]


# ----------------------------------------------------------------------------- progress


def test_long_commands_print_plain_progress_lines_when_not_on_a_terminal(separate):
    spec, project = separate
    result = invoke("maintain", "--project", str(project))
    assert result.stderr.splitlines()[:2] == ["assay maintain [1/3] reading the spec", "assay maintain [2/3] connecting to the warehouse"]
    result = invoke("report", "--project", str(project))
    assert result.stderr.splitlines()[:2] == ["assay report [1/4] reading the spec", "assay report [2/4] connecting to the warehouse"]
    assert invoke("report", "--json", "--project", str(project)).stderr.startswith("Error: ")  # --json: none


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_progress_is_one_status_line_rewritten_and_cleared(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    stream = _Terminal()
    with Progress("demo", 2, stream=stream) as progress:
        progress.step("dbt build")
        progress.step("read")
    assert stream.getvalue() == (
        "\rassay demo [1/2] dbt build"
        "\rassay demo [2/2] read     "  # padded over the longer line before it
        "\r" + " " * len("assay demo [2/2] read") + "\r"
    )
    assert "\n" not in stream.getvalue()
    plain = io.StringIO()
    with Progress("demo", 2, stream=plain) as progress:
        progress.step("dbt build")
    assert plain.getvalue() == "assay demo [1/2] dbt build\n"


def test_a_postgres_profile_is_reached_by_every_warehouse_command_with_target(tmp_path):
    project = tmp_path / "proj"
    write_dbt_skeleton(project, "shop", postgres_profile("shop", "127.0.0.1", 1, "assay", "secret", "warehouse"))
    for args in (["explain", "order", "O-1"], ["report"], ["maintain"], ["replay", "order"], ["checks"], ["check", "list"]):
        result = invoke(*args, "--spec", str(EXAMPLE), "--project", str(project), "--target", "prod")
        assert result.exit_code == 1, (args, result.output)
        assert "has no target 'prod' (its targets: 'dev')" in result.stderr, args


def test_generate_as_json(separate):
    spec, project = separate
    (project / "macros" / "generate_schema_name.sql").unlink()
    result = invoke("generate", "dbt", "--project", str(project), "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["spec"] == spec.as_posix() and doc["entities"] == ["customer", "order"]
    assert doc["written"] == [] and doc["removed"] == [] and doc["overwrote_edits"] == []
    assert doc["schemas"] == {"silver": "main_silver", "gold": "main_gold", "meta": "main_assay_meta"}
    assert doc["next"].startswith(f"cd {project} && dbt deps && dbt build")


def test_replay_redelivers_an_incremental_entitys_rows_still_in_bronze(tmp_path):
    """An incremental entity's ledger took its bronze rows once: the next build does not judge them
    again, so replay re-delivers them too and a plain build judges them (decision 1100). Only a
    row whose replayed delivery bronze already holds (and the build still diverted) cannot go back
    a second time under `__replay__`: replay names the full refresh for it."""
    import shutil

    spec = tmp_path / "shop"
    shutil.copytree(EXAMPLE, spec, ignore=shutil.ignore_patterns("warehouse*", "target", "dbt_packages", "logs"))
    entities = spec / "spec" / "entities.yml"
    text = entities.read_text()
    marker = "    grain: one row per order, latest delivery wins\n"
    assert marker in text
    entities.write_text(text.replace(marker, marker + "    materialized: incremental\n"))
    project, con = _reject_warehouse(tmp_path)
    con.execute("insert into bronze.raw_orders values ('l1', '2026-03-01T10:00:00Z', 'o-404', 'O-404', '-1')")
    con.close()
    result = invoke("replay", "order", "--spec", str(spec), "--project", str(project), "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "order: 1 open reject row is still in bronze; an incremental entity's next build does not judge it again, "
        "so replay re-delivers it with the rows that aged out",
        "order: would re-deliver 1 row into bronze.raw_orders with _load_id '__replay__'",
    ]
    result = invoke("replay", "order", "--spec", str(spec), "--project", str(project))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1].startswith(f"next: cd {project} && dbt build"), result.stdout
    assert "--full-refresh" not in result.stdout
    # the replayed delivery is in bronze now; were the build to divert it again, replay cannot
    # deliver it a second time under __replay__
    result = invoke("replay", "order", "--spec", str(spec), "--project", str(project), "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == (
        "order: 1 open reject row is still in bronze; an incremental entity's next build does not judge it again; "
        "1 was replayed already (bronze holds the `__replay__` delivery), so replay does not deliver it again: a "
        "replayed delivery the build diverts again is judged again only by `dbt build --full-refresh --select order__staged+`")
    as_json = invoke("replay", "order", "--spec", str(spec), "--project", str(project), "--dry-run", "--json")
    assert json.loads(as_json.stdout) == {"entity": "order", "dry_run": True, "in_bronze": 1, "needs_full_refresh": 1,
                                          "redelivered": {}, "unrecoverable": 0, "superseded": 0}


def test_maintain_names_a_reject_table_no_entity_claims(separate):
    # An entity renamed or removed since the build leaves its reject table, which the spec's
    # retention no longer reaches: maintain says so instead of passing over it (an outside
    # tester, session 40: "nothing to do" while silver.order__reject held open rows).
    _, project = separate
    conn = duckdb.connect(str(project / "warehouse.duckdb"))
    conn.execute("create schema silver")
    conn.execute("create table silver.purchase__reject (_source_row_id varchar)")
    conn.execute("create table silver.purchase (id varchar)")
    conn.close()
    result = invoke("maintain", "--json", "--dry-run", "--project", str(project))
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout) == []
    said = " ".join(result.stderr.split())
    assert ("silver.purchase__reject: no entity of the spec quarantines into it any more (renamed or removed, or its "
            "`quarantine:` dropped since the build), so no retention applies to it and maintain left it as it is") in said
    assert "silver.purchase:" not in said
    # and the spec's own reject tables are not there: no build wrote this warehouse (an outside
    # tester, session 45: a retention job pointed at the wrong target passed, deleting nothing)
    text = invoke("maintain", "--dry-run", "--project", str(project))
    assert text.exit_code == 1, text.output
    said = " ".join(text.stderr.split())
    assert "holds none of the spec's reject tables with a retention (silver.customer__reject, silver.order__reject)" in said, said
    assert "nothing was deleted" in said, said


def test_generate_refuses_a_model_of_the_users_named_like_a_generated_one(separate):
    """An outside tester (session 41): `models/mine/order.sql` beside the spec's `order`; generate
    wrote, and dbt then refused the project ("dbt found two models with the name")."""
    spec, project = separate
    (project / "models" / "mine").mkdir(parents=True)
    (project / "models" / "mine" / "order.sql").write_text("select 1 as x\n")
    (project / "models" / "mine" / "mine.sql").write_text("select 1 as x\n")
    before = _tree(project)
    result = invoke("generate", "dbt", "--spec", str(spec), "--project", str(project))
    assert result.exit_code == 1, result.output
    said = " ".join(result.stderr.split())
    assert "1 model or snapshot file of your own in" in said and "has the name of one assay generates" in said
    assert "models/mine/order.sql: named like the generated models/assay/order/order.sql" in said
    assert _tree(project) == before  # nothing was written
    # regenerating over assay's own files is no clash
    (project / "models" / "mine" / "order.sql").unlink()
    again = invoke("generate", "dbt", "--spec", str(spec), "--project", str(project))
    assert again.exit_code == 0, again.output


def test_a_refusal_under_json_is_json(separate, tmp_path):
    """An outside tester (session 41): `generate dbt --json` on a broken spec printed plain
    `file:line: CODE:` lines on stdout, and `table get --json` only an `Error:` on stderr."""
    spec, project = separate
    entities = spec / "spec" / "entities.yml"
    entities.write_text(entities.read_text().replace("tier: {type: int}", "tier: {type: integer}"))
    result = invoke("generate", "dbt", "--json", "--spec", str(spec), "--project", str(project))
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["exit_code"] == 1 and doc["error"].startswith("1 problem found in the spec")
    assert [(p["file"], p["code"]) for p in doc["problems"]] == [("spec/entities.yml", "SPEC_INVALID")]
    assert "Did you mean `int`?" in doc["problems"][0]["message"]
    unknown = invoke("table", "get", "nosuch", "--json", "--project", str(project))
    assert unknown.exit_code in (1, 3) and json.loads(unknown.stdout)["ok"] is False, unknown.output


def test_a_project_holding_assay_yml_is_its_own_spec_for_every_command(tmp_path):
    """An outside tester (session 41): in a project never generated whose folder holds assay.yml,
    `table list` and `checks` said to pass --spec, where `validate` found the spec there."""
    project = tmp_path / "proj"
    shutil.copytree(EXAMPLE, project)
    write_dbt_skeleton(project, "shop", duckdb_profile("shop", str(project / "warehouse.duckdb")))
    duckdb.connect(str(project / "warehouse.duckdb")).close()
    for args in (["table", "list"], ["checks"]):
        result = invoke(*args, "--project", str(project))
        assert "has no spec recorded" not in result.output and "pass --spec" not in result.output, (args, result.output)


def test_plan_with_both_specs_broken_says_both(tmp_path):
    # it said only the new spec's problems, and the old spec's came after they were fixed
    old, new = tmp_path / "old", tmp_path / "new"
    for spec in (old, new):
        shutil.copytree(EXAMPLE, spec)
        entities = spec / "spec" / "entities.yml"
        entities.write_text(entities.read_text().replace("key: [order_id]", "key: [order_idd]", 1))
    customers = old / "spec" / "customers.yml"
    customers.write_text(customers.read_text().replace("key:", "kee:", 1))
    result = invoke("plan", str(old), "--spec", str(new))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == f"the new spec ({new}):"
    assert f"the old spec ({old}):" in result.stdout.splitlines()
    assert f"{old}/spec/customers.yml:" in result.stdout and f"{new}/spec/entities.yml:" in result.stdout
    assert "problems found in the two specs" in result.stderr
    as_json = json.loads(invoke("plan", str(old), "--spec", str(new), "--json").stdout)
    assert {Path(p["file"]).parent.parent for p in as_json["problems"]} == {old, new}


def test_checks_outside_a_project_says_so_first(tmp_path):
    # it said to pass --spec, which then failed on the missing dbt_project.yml (an outside tester)
    project = tmp_path / "shop"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    inside = invoke("checks", cwd=project / "models")
    assert inside.exit_code == 1
    assert ". is not a dbt or SQLMesh project" in inside.stderr and f"{project} is one." in inside.stderr
    elsewhere = invoke("checks", cwd=tmp_path)
    assert elsewhere.exit_code == 1 and "is not a dbt or SQLMesh project" in elsewhere.stderr
    assert "is one" not in elsewhere.stderr


@pytest.mark.parametrize("command", [["explain", "trip", "T1"], ["report", "--json"], ["anomalies"]])
def test_a_command_in_a_projects_subdirectory_says_so_not_reads_it_as_a_spec(tmp_path, command):
    # An outside tester (session 43): in a dbt project's models/, `explain`, `report` and `anomalies`
    # read assay's generated YAML as the spec and said "4 problems found in the spec", to be fixed
    # in generated files; `checks` said where the project is.
    project = tmp_path / "shop"
    (project / "models" / "assay").mkdir(parents=True)
    (project / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    (project / "models" / "assay" / "sources.yml").write_text("version: 2\nsources: []\n")
    inside = invoke(*command, cwd=project / "models")
    assert inside.exit_code == 1, inside.output
    assert ". is not a dbt or SQLMesh project" in inside.stderr and f"{project} is one." in inside.stderr
    assert "SPEC_GRAMMAR" not in inside.output


def _on_an_unbuilt_warehouse(separate, *args: str) -> str:
    """What a command says on the example's warehouse file before any build wrote it (exit 1)."""
    _, project = separate
    duckdb.connect(str(project / "warehouse.duckdb")).close()
    result = invoke(*args, "--project", str(project))
    assert result.exit_code == 1, result.output
    return " ".join(result.stderr.split())


def test_explain_on_a_warehouse_no_build_wrote_names_it(separate):
    # the engine's "table does not exist, did you mean ..." named neither the warehouse nor what to
    # do (an outside tester, session 45)
    said = _on_an_unbuilt_warehouse(separate, "explain", "order", "O-1")
    assert "order was never built in the warehouse of profile 'shop'" in said, said
    assert "silver.order__staged is not there" in said and "dbt build" in said, said
    assert "Catalog Error" not in said, said


def test_replay_on_a_warehouse_no_build_wrote_names_it(separate):
    said = _on_an_unbuilt_warehouse(separate, "replay", "order", "--dry-run")
    assert "order was never built in the warehouse of profile 'shop'" in said and "silver.order__reject is not there" in said, said


def test_explain_refuses_a_key_beside_a_source_row_id(separate):
    _, project = separate
    result = invoke("explain", "order", "O-1", "--source-row-id", "r-1", "--project", str(project))
    assert result.exit_code == 3, result.output
    assert "give a key (order_id) or --source-row-id, not both" in result.stderr, result.stderr


def test_the_sqlmesh_build_command_runs_from_the_project_not_with_p(tmp_path, monkeypatch):
    # `sqlmesh -p DIR plan` from elsewhere opens a gateway's relative DuckDB path in the current
    # directory: an empty warehouse (an outside tester, session 45)
    from assay.cli.common import build_command

    project = tmp_path / "lake"
    project.mkdir()
    (project / "config.yaml").write_text("gateways: {}\n")
    monkeypatch.setattr("assay.runtime.warehouse.project_kind", lambda _d: "sqlmesh")
    monkeypatch.chdir(tmp_path)
    assert build_command(project) == f"cd {project} && sqlmesh plan"
    monkeypatch.chdir(project)
    assert build_command(Path(".")) == "sqlmesh plan"
    # new bronze loads are judged by the next interval: a plan of unchanged files plans nothing
    # (an outside tester, session 48)
    from assay.cli.common import load_command

    assert load_command(Path(".")) == "sqlmesh run"
    monkeypatch.chdir(tmp_path)
    assert load_command(project) == f"cd {project} && sqlmesh run"
