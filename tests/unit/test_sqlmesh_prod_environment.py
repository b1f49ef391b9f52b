"""Reading prod of a SQLMesh project where only development plans ran (an outside tester, session
40): every command read prod as an empty environment and said "never built" or "nothing to do";
the error for an unknown environment listed prod among those the warehouse holds."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from assay.errors import WarehouseError
from assay.runtime.sqlmesh_gateway import environment_schemas


def _warehouse(*schemas: str):
    conn = duckdb.connect(":memory:")
    for schema in schemas:
        conn.execute(f"create schema {schema}")
    return conn


def test_prod_that_no_plan_wrote_is_an_error_naming_the_environments_there_are(tmp_path: Path):
    conn = _warehouse("silver__dev", "gold__dev")
    with pytest.raises(WarehouseError) as exc:
        environment_schemas(tmp_path, "prod", {"silver": "silver", "gold": "gold"}, conn, "duckdb")
    assert "holds no prod environment of this project yet (no schema silver); its environments: dev." in str(exc.value)
    assert "run `sqlmesh plan` (prod) first" in str(exc.value)


def test_prod_is_read_where_it_exists_and_where_nothing_was_planned(tmp_path: Path):
    schemas = {"silver": "silver", "gold": "gold"}
    assert environment_schemas(tmp_path, "prod", schemas, _warehouse("silver", "silver__dev"), "duckdb") == schemas
    # a project no plan has written yet: prod reads as never built, which is what it is
    assert environment_schemas(tmp_path, "prod", schemas, _warehouse(), "duckdb") == schemas


TABLES = (("gold", "mart_data_quality"), ("silver", "order"), ("silver", "order__reject"), ("silver", "customer"))


def _published(conn, schema: str, *tables: str):
    conn.execute(f"create schema if not exists {schema}")
    for table in tables:
        conn.execute(f'create view {schema}."{table}" as select 1 as x')
    return conn


@pytest.mark.parametrize("role", ["silver", "gold"])
def test_a_schema_the_spec_moved_since_the_plan_is_said_not_read_as_never_built(tmp_path: Path, role):
    # An outside tester (session 40): `silver: silver_x` in assay.yml after a plan, and every
    # command said "never built" or "nothing to do" of a prod the last plan did publish.
    conn = _published(_warehouse("sqlmesh__silver", "sqlmesh__gold"), "silver", "order", "order__reject", "customer")
    _published(conn, "gold", "mart_data_quality")
    _published(conn, "silver__dev", "order", "order__reject", "customer")  # an environment's views: not prod
    schemas = {"silver": "silver", "gold": "gold", role: f"{role}_x"}
    with pytest.raises(WarehouseError) as exc:
        environment_schemas(tmp_path, "prod", schemas, conn, "duckdb", TABLES)
    assert (f"the spec's {role} schema `{role}_x` is not in the warehouse, but `{role}` publishes every table of it "
            f"this command reads: the spec's {role} schema moved (assay.yml) since the last plan") in str(exc.value)


def test_another_projects_schema_sharing_a_table_name_is_not_taken_for_this_ones(tmp_path: Path):
    # a project never planned, beside another whose silver holds an `order` but not this spec's `customer`
    conn = _published(_warehouse(), "silver_a", "order", "order__reject")
    schemas = {"silver": "silver_b", "gold": "gold_b"}
    assert environment_schemas(tmp_path, "prod", schemas, conn, "duckdb", TABLES) == schemas


def test_the_default_environment_is_checked_as_prod_is(tmp_path: Path):
    # Without --environment the commands read prod: the same refusals hold there (session 40's
    # fix applied to `--environment prod` only; the default path read prod unchecked)
    from assay.api import load_project
    from assay.runtime.built_relations import built_project

    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    project = load_project(Path(__file__).resolve().parents[2] / "examples" / "shop")
    with pytest.raises(WarehouseError) as exc:
        built_project(project, tmp_path, conn=_warehouse("silver__dev", "gold__dev"), dialect="duckdb")
    assert "holds no prod environment of this project yet" in str(exc.value)
    assert built_project(project, tmp_path, conn=_warehouse(), dialect="duckdb").schemas == project.schemas


def _config(project: Path, meta: str) -> Path:
    (project / "config.yaml").write_text(f"before_all:\n  - \"@assay_record_environment('{meta}')\"\n"
                                         "model_defaults:\n  dialect: duckdb\n")
    return project


META = {"silver": "silver", "gold": "gold", "meta": "fleet_meta2"}


def test_a_config_recording_into_another_meta_schema_is_said(tmp_path: Path):
    """An outside tester (session 43): `meta:` renamed in assay.yml and the project regenerated;
    the config's before_all still recorded into the old schema, so every plan wrote its results and
    events where the commands no longer read, and `assay checks` said "no check results recorded"."""
    from assay.errors import ProjectError

    conn = _published(_warehouse(), "silver", "order")
    with pytest.raises(ProjectError) as exc:
        environment_schemas(_config(tmp_path, "fleet_meta"), "prod", META, conn, "duckdb")
    assert ("records each plan's environment into `fleet_meta` (its before_all), but the spec's meta schema is "
            "`fleet_meta2`") in str(exc.value)
    assert "@assay_record_environment('fleet_meta2')" in str(exc.value)


def test_a_meta_schema_no_plan_recorded_into_beside_a_built_prod_is_said(tmp_path: Path):
    """The config moved too, but no plan ran since: the new meta schema holds nothing."""
    from assay.errors import ProjectError

    conn = _published(_warehouse(), "silver", "order")
    conn.execute("create schema fleet_meta")
    conn.execute("create table fleet_meta.assay_events (x int)")  # the last plan's records, in the old schema
    with pytest.raises(ProjectError) as exc:
        environment_schemas(_config(tmp_path, "fleet_meta2"), "prod", META, conn, "duckdb")
    assert "the spec's meta schema `fleet_meta2` holds no record of any plan: the meta schema moved" in str(exc.value)
    # once a plan recorded into it, prod is read there
    conn.execute("create schema fleet_meta2")
    conn.execute("create table fleet_meta2.assay_events (x int)")
    assert environment_schemas(tmp_path, "prod", META, conn, "duckdb") == META
    # and a project no plan has built yet is not said to have moved anything
    assert environment_schemas(tmp_path, "prod", META, _warehouse(), "duckdb") == META


def test_generate_says_when_the_config_records_into_another_meta_schema(tmp_path: Path):
    from click.testing import CliRunner

    from assay.cli.main import cli

    spec = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "composite"
    project = tmp_path / "sm"
    project.mkdir()
    _config(project, "not_the_meta")
    res = CliRunner().invoke(cli, ["generate", "sqlmesh", "--spec", str(spec), "--project", str(project)])
    assert res.exit_code == 0, res.output
    assert "the config's before_all records each plan's environment into `not_the_meta`, but the spec's meta schema is" in res.output


def test_generate_says_when_the_config_lacks_the_errors_statement_or_records_it_elsewhere(tmp_path: Path):
    """Decision 1164: without `@assay_record_errored_models` in after_all a model whose SQL errors
    leaves no trace; naming another meta schema, it records where the commands do not read."""
    from click.testing import CliRunner

    from assay.cli.main import cli

    spec = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "composite"
    project = tmp_path / "sm"
    project.mkdir()
    _config(project, "assay_meta")
    args = ["generate", "sqlmesh", "--spec", str(spec), "--project", str(project)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert ("note: the config does not record a model whose SQL errors; add "
            "\"@assay_record_errored_models('assay_meta')\" to its after_all statements") in res.stderr, res.stderr
    with (project / "config.yaml").open("a") as f:
        f.write("after_all:\n  - \"@assay_record_errored_models('old_meta')\"\n")
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert "does not record a model whose SQL errors" not in res.stderr, res.stderr
    assert ("note: the config's after_all records a model whose SQL errors into `old_meta`, but the spec's meta "
            "schema is `assay_meta`") in res.stderr, res.stderr
