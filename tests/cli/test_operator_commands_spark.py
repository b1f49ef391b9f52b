"""The read-only operator commands on the Spark example (decision 0840), and the refusal of the writing ones.

One real build (module-scoped): `assay demo shop --engine spark`. Then the commands run through
click's CliRunner as a user runs them. The first starts ONE child Spark (shared by its three
connect() calls) and stops it when it ends, as every command run from a shell does; the others
share one child the module holds (`held_session`), which saves a JVM start per command. The
expectations are the sample's, written by hand: the same facts the DuckDB demo's tests assert
(tests/cli/test_demo.py) and docs/quickstart.md describes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.runtime.spark_conn import held_session, to_spark


def spark(test):
    """A test that starts Spark (the demo's build, then one JVM per command)."""
    return pytest.mark.slow(pytest.mark.spark(test))


ENOUGH = "row count 5 satisfies the declared minimum of 1"


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> tuple[Path, str]:
    """The built Spark example and its run id."""
    base = tmp_path_factory.mktemp("spark_operator")
    result = CliRunner().invoke(cli, ["demo", str(base / "shop"), "--engine", "spark"])
    assert result.exit_code == 0, result.output
    project = base / "shop"
    run_id = json.loads((project / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    return project, run_id


@pytest.fixture(scope="module")
def held(shop):
    """One Spark for the commands of the tests that take this fixture (held_session): a JVM start is
    20 to 50 s. The first test starts and stops its own, as a command run from a shell does."""
    with held_session(shop[0]):
        yield shop


def _run(project: Path, *args: str):
    return CliRunner().invoke(cli, [*args, "--project", str(project)])


def _no_spark_left(project: Path, profiles_dir: str = "") -> None:
    """No child Spark of this project (started with this --profiles-dir) outlives its command (its
    metastore is free for dbt)."""
    left = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline[2:5] == [b"assay.runtime.spark_conn", str(project.resolve()).encode(), profiles_dir.encode()]:
            left.append(proc.name)
    assert left == []


@spark
def test_check_rows_starts_one_spark_for_its_three_connections_and_stops_it(shop):
    project, run_id = shop
    # check rows connects three times (runs, results, kept rows): one child Spark serves them all,
    # and it is gone when the command returns, so the metastore is free for dbt.
    rows = _run(project, "check", "rows", run_id[:8], "enough_orders")
    assert rows.exit_code == 0, rows.output
    assert rows.stdout == ""
    assert rows.stderr == f"order: ENOUGH_ORDERS: no rows: it passed: {ENOUGH}\n"
    _no_spark_left(project)


@spark
def test_checks_of_a_run_and_of_the_latest(held):
    project, run_id = held
    result = _run(project, "checks", run_id)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"order: ENOUGH_ORDERS: passed: {ENOUGH}\n"
    latest = _run(project, "checks", "--json")
    assert latest.exit_code == 0, latest.output
    assert json.loads(latest.stdout) == [{"check_id": "ENOUGH_ORDERS", "passed": True, "detail": ENOUGH}]
    assert latest.stderr == f"run {run_id} (the latest)\n"


@spark
def test_check_list(held):
    project, run_id = held
    result = _run(project, "check", "list", "--json")
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)
    assert [{k: v for k, v in i.items() if k != "finished_at"} for i in items] == [
        {"run": run_id, "table": "order", "check": "ENOUGH_ORDERS", "outcome": "passed", "rows": "",
         "on_failure": "advisory"}]
    assert items[0]["finished_at"].startswith("20")  # a timestamp, read back naive in UTC


@spark
def test_table_list_and_get(held):
    project, _ = held
    listed = _run(project, "table", "list", "--json")
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.stdout) == [{"table": "order", "state": "published", "run": None, "check": None, "why": None,
                                          "since": None, "built_by_project": True}]
    got = _run(project, "table", "get", "silver.order")
    assert (got.exit_code, got.stdout) == (0, "order: published\n")


@spark
def test_report_counts_the_samples_outcomes(held):
    project, run_id = held
    result = _run(project, "report", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    entities = {e["entity"]: e for e in data["entities"]}
    counts = {n: ({k: e["latest"][k] for k in ("bronze", "kept", "quarantined", "deduped")}, e["flagged"])
              for n, e in entities.items()}
    # The demo's table, as on DuckDB: customer 6 -> 3 kept (1 flagged), 2 quarantined, 1 deduped; order 10 -> 5, 3, 4, 1.
    assert counts == {"customer": ({"bronze": 6, "kept": 3, "quarantined": 2, "deduped": 1}, 1),
                      "order": ({"bronze": 10, "kept": 5, "quarantined": 4, "deduped": 1}, 3)}
    order = entities["order"]
    assert order["latest"]["run_id"] == run_id
    assert order["rejects"]["open"] == 4 and entities["customer"]["rejects"]["open"] == 2
    # Rules and examples, from the reject table (failed_rules an array on Spark) and the entity.
    # Rules ranked by rows failed, with examples from the reject table (failed_rules is an array on
    # Spark) and from the entity's flagged rows: the DuckDB demo's report, to the row.
    assert [(r["rule"], r["disposition"], r["rows_failed"], [(x["where"], x["source_row_id"]) for x in r["examples"]])
            for r in order["top_rules"]] == [
        ("discount_not_above_amount", "flag", 2, [("reject", "o-007"), ("entity (flagged)", "o-008")]),
        ("order_of_customer_referential", "flag", 2, [("entity (flagged)", "o-003"), ("entity (flagged)", "o-010")]),
        ("amount_coercible", "quarantine", 1, [("reject", "o-006")]),
        ("amount_range_max", "flag", 1, [("entity (flagged)", "o-008")]),
        ("amount_range_min", "quarantine", 1, [("reject", "o-007")]),
        ("ordered_at_coercible", "quarantine", 1, [("reject", "o-004")]),
        ("status_in_enum", "quarantine", 1, [("reject", "o-005")]),
    ]
    assert [r["rule"] for r in entities["customer"]["top_rules"]] == ["country_length", "email_pattern", "tier_coercible"]
    example = order["top_rules"][2]["examples"][0]
    assert (example["key"], example["raw"]["price"]) == ({"order_id": "O-6"}, "12,50")
    # Open reject rows by age (naive UTC timestamps): the demo's rows are an hour old, under 25% of retention.
    assert [b["rows"] for b in order["rejects"]["by_age"]] == [4, 0, 0, 0, 0]
    assert [(f["source"], f["status"]) for f in order["freshness"]] == [("raw_orders", "pass")]
    assert [(c["table"], c["check_id"], c["passed"], c["detail"]) for c in data["checks"]] == [
        ("order", "ENOUGH_ORDERS", True, ENOUGH)]


@spark
def test_explain_says_why_a_key_is_not_in_the_entity(held):
    project, _ = held
    result = _run(project, "explain", "order", "O-6")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "order order_id='O-6': 1 delivery in bronze." in out
    assert "It is not in the entity: its judged delivery o-006 was quarantined to the reject table. 1 open reject row." in out
    assert "coercion failed: amount: bronze $.price = '12,50' did not become a decimal(12,2)" in out
    assert "rule amount_coercible (quarantine): fired" in out and "rule status_in_enum (quarantine): held" in out
    assert ("failed rules: amount_coercible" in out) and "reject row " in out
    assert "quarantined because amount_coercible (quarantine) fired" in out


@spark
def test_a_metastore_another_process_holds_fails_the_command_with_derbys_reason(held):
    project, _ = held
    # Another connection (--profiles-dir makes it another) while the module's Spark holds the metastore,
    # as when dbt runs: the child's Spark cannot open Derby, and the command says so and why.
    result = _run(project, "table", "list", "--profiles-dir", str(project))
    assert result.exit_code == 1, result.output
    assert "Caused by: ERROR XSDB6: Another instance of Derby may have already booted the database" in result.stderr
    assert (f"Error: Spark stopped while starting for the warehouse of profile 'shop', target 'dev' "
            f"(spark at {project.resolve()}/spark/warehouse, from {project}/profiles.yml); its error is above (when "
            "it names the metastore or Derby, another process holds it") in result.stderr
    assert "Traceback" not in result.output and "\tat org." not in result.stderr
    _no_spark_left(project, str(project))  # the failed child is gone (the module's own stays)


@pytest.mark.parametrize("command, why", [
    (["maintain", "--now", "2027-01-01T00:00:00Z"], "Spark's parquet tables take no DELETE or UPDATE"),
    (["replay", "order"], "python load_bronze.py --append"),
])
def test_the_writing_commands_are_refused_before_spark_starts(tmp_path, command, why):
    # The example as `assay init` leaves it: the refusal comes before any Spark, built or not.
    project = tmp_path / "shop"
    assert CliRunner().invoke(cli, ["init", str(project), "--engine", "spark"]).exit_code == 0
    result = _run(project, *command)
    assert result.exit_code == 1, result.output
    assert (f"Error: `assay {command[0]}` cannot run on the Spark warehouse of profile 'shop', target 'dev' "
            f"(spark at {project.resolve()}/spark/warehouse, from {project}/profiles.yml): ") in result.stderr
    assert why in result.stderr
    assert "Traceback" not in result.output
    assert not (project / "spark" / "metastore_db").exists()  # no Spark was started


def test_readers_sql_is_spelled_for_spark_with_the_catalog_view():
    # DuckDB's spelling in, Spark's out; parameters stay `?` marks (Spark binds them, decision 0840).
    assert to_spark('select * from "silver"."order" where cast("order_id" as varchar) = ? limit 500') == (
        "SELECT * FROM `silver`.`order` WHERE CAST(`order_id` AS STRING) = ? LIMIT 500")
    assert to_spark("select count(*) from information_schema.tables where table_schema = ? and table_name = ?") == (
        "SELECT COUNT(*) FROM assay_information_schema_tables WHERE table_schema = ? AND table_name = ?")
    # DuckDB sorts NULLs last ascending, Spark first: sqlglot keeps DuckDB's order.
    assert to_spark("select a from t order by a") == "SELECT a FROM t ORDER BY a NULLS LAST"
