"""`assay init --engine spark` and `assay demo --engine spark`: the example on Apache Spark in local mode.

One real run (module-scoped): the demo inits the Spark example, generates, loads bronze with the
project's `load_bronze.py` (Spark's own CSV reader), runs `dbt deps`, `dbt build` and `dbt source
freshness` on dbt-spark's session method, and reads what landed where; the tables themselves are
read through the Spark the operator-command tests hold. Expectations are the sample's, written by hand (the same outcomes as the
DuckDB demo, tests/cli/test_demo.py; only `grants` is left out on Spark, decision 0822). Then
the operator commands run on the demo's warehouse (decision 0840): the readers, and replay, which
appends to bronze; maintain, which deletes, is refused. The init-only tests start no Spark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.cli.main import cli
from assay.runtime.derby_lock import holder
from assay.runtime.spark_conn import held_session, session_settings, to_spark
from assay.runtime.warehouse import connect


def _init(directory: Path, *extra: str):
    return CliRunner().invoke(cli, ["init", str(directory), *extra])


def test_init_spark_writes_a_session_profile_with_absolute_paths_and_the_loader(tmp_path):
    result = _init(tmp_path / "shop", "--engine", "spark")
    assert result.exit_code == 0, result.output
    project = (tmp_path / "shop").resolve()
    output = yaml.safe_load((project / "profiles.yml").read_text())["shop"]["outputs"]["dev"]
    assert (output["type"], output["method"], output["threads"]) == ("spark", "session", 2)
    params = output["server_side_parameters"]
    # Absolute, under the project: dbt, the loader and assay find one warehouse from any directory.
    assert params["spark.sql.warehouse.dir"] == f"{project}/spark/warehouse"
    assert params["spark.hadoop.hive.downloaded.resources.dir"] == f"{project}/spark/hive_resources"
    assert params["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={project}/spark/metastore_db;create=true")
    # derby.log goes there; Spark logs errors only (at warn, every dbt node prints a line of it)
    assert params["spark.driver.extraJavaOptions"] == (
        f"-Dderby.system.home={project}/spark -Dlog4j2.configurationFile=file:{project}/spark/log4j2.properties "
        "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC")
    assert "rootLogger.level = error" in (project / "spark" / "log4j2.properties").read_text()
    assert (params["spark.ui.showConsoleProgress"], params["spark.sql.session.timeZone"]) == ("false", "UTC")
    loader = (project / "load_bronze.py").read_text()
    assert "spark.read.csv(" in loader and 'nullValue="\\u0000"' in loader
    assert "seeds" not in loader
    # What open-source Spark cannot do is commented out of the spec, with the reason (decision 0822);
    # type-2 history stays (assay_history on parquet, decision 0807).
    entities = (project / "spec" / "entities.yml").read_text()
    assert "\n    scd: type2\n" in entities
    assert "\n    # grants: {select: [reporter]}   # open-source Spark has no GRANT" in entities and "\n    grants:" not in entities
    assert result.stdout.splitlines()[-1] == (
        f"next: cd {tmp_path / 'shop'} && python load_bronze.py && assay generate dbt && dbt deps && dbt build "
        "(one at a time: the metastore admits one process; docs/engines.md)")
    # The loader's explicit schema names the sample's columns, in the files' order.
    for table in ("raw_customers", "raw_orders"):
        header = (project / "bronze" / f"{table}.csv").read_text().splitlines()[0].replace('"', "").split(",")
        namespace: dict = {"__file__": str(project / "load_bronze.py")}  # its constants; nothing starts Spark
        exec(compile(loader.split("\n\ndef spark_session")[0], "load_bronze.py", "exec"), namespace)
        assert namespace["TABLES"][table] == header


def test_init_refuses_to_switch_the_engine_of_an_earlier_example(tmp_path):
    assert _init(tmp_path / "shop").exit_code == 0  # DuckDB
    result = _init(tmp_path / "shop", "--engine", "spark")
    assert result.exit_code == 3, result.output
    assert "holds an example made for duckdb (its profiles.yml); pick a new directory for the spark example" in result.stderr
    assert not (tmp_path / "shop" / "load_bronze.py").exists()


@pytest.fixture(scope="module")
def spark_demo(tmp_path_factory):
    """`assay demo shop --engine spark`, run from the parent directory with a relative path."""
    base = tmp_path_factory.mktemp("spark_demo")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(base)
        result = CliRunner().invoke(cli, ["demo", "shop", "--engine", "spark"])
    return base, result


@pytest.mark.slow
@pytest.mark.spark
def test_the_demo_builds_on_spark_with_the_samples_outcomes(spark_demo):
    base, result = spark_demo
    project = base / "shop"
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1:4] == ["2. bronze: raw_customers 6 rows, raw_orders 10 rows", "3. dbt deps: ok", lines[3]]
    # Every node passed; the one warning is the sample's flagged rule, as on DuckDB.
    assert lines[3].startswith("4. dbt build: ok Done. PASS=") and " WARN=1 ERROR=0 SKIP=0 " in lines[3], lines[3]
    assert lines[4].startswith("   run id: ") and lines[5] == "5. dbt source freshness: ok"
    # What landed where, read from the Spark tables: the sample's outcomes, as on DuckDB.
    assert "entity    bronze  kept  flagged  quarantined  deduped\n" in result.stdout
    assert "customer  6       3     1        2            1\n" in result.stdout
    assert "order     10      5     3        4            1\n" in result.stdout
    assert f"(in the Spark warehouse under {project / 'spark'})" in result.stdout
    # Spark's files stay under the project; nothing lands where the command ran.
    assert sorted(p.name for p in base.iterdir()) == ["shop"]
    # hive_resources: Hive's session directory, made where the profile says (else one per JVM in /tmp)
    assert sorted(p.name for p in (project / "spark").iterdir()) == [
        "derby.log", "hive_resources", "log4j2.properties", "metastore_db", "warehouse"]
    assert not (project / "derby.log").exists() and not (project / "spark-warehouse").exists()


def _names(failed_rules) -> list[str]:
    """The rule names of a reject row's `failed_rules`: an array on Spark, read back as a list."""
    return sorted(failed_rules) if isinstance(failed_rules, list) else sorted(str(failed_rules).strip("[]").replace(" ", "").split(","))


# --- The operator commands on the demo's warehouse (decision 0840) ------------------------------
# The read-only commands run through click's CliRunner as a user runs them, sharing one child
# Spark the module holds (`held_session`), which saves a JVM start per command; a command run from
# a shell starts its own and stops it when it ends (tests/unit/test_spark_command_child.py; the
# demo's own held child is gone when the demo returns, below). They come after the tests above,
# which open the metastore themselves: the held child keeps it until the module ends. The
# expectations are the sample's, the facts the DuckDB demo's tests assert (tests/cli/test_demo.py)
# and docs/quickstart.md shows.

def spark(test):
    """A test that starts Spark (the demo's build, then one JVM per command)."""
    return pytest.mark.slow(pytest.mark.spark(test))


ENOUGH = "row count 5 satisfies the declared minimum of 1"


@pytest.fixture(scope="module")
def shop(spark_demo) -> tuple[Path, str]:
    """The Spark example the demo built, and its run id (the operator commands read it)."""
    base, result = spark_demo
    assert result.exit_code == 0, result.output
    project = base / "shop"
    run_id = json.loads((project / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    return project, run_id


@pytest.fixture(scope="module")
def held(shop):
    """One Spark for the commands of the tests that take this fixture (held_session): a JVM start is
    20 to 50 s."""
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
def test_the_demos_spark_is_gone_when_it_returns(shop):
    project, _ = shop
    # The demo read what landed where through a child Spark of its own, as every command run from a
    # shell does: it is gone when the command returns, so the metastore is free for dbt.
    _no_spark_left(project)
    # and its JVM is gone too: nothing holds the metastore the moment the command has returned
    assert holder(session_settings(project)) is None


@spark
def test_check_rows_of_a_passed_check(held):
    project, run_id = held
    # check rows asks three questions (runs, results, kept rows) over one connection (the operator core)
    rows = _run(project, "check", "rows", run_id[:8], "enough_orders")
    assert rows.exit_code == 0, rows.output
    assert rows.stdout == ""
    assert rows.stderr == f"order: ENOUGH_ORDERS: no rows: it passed: {ENOUGH}\n"


@spark
def test_checks_of_a_run_and_of_the_latest(held):
    project, run_id = held
    result = _run(project, "checks", run_id)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"order: ENOUGH_ORDERS: passed: {ENOUGH}\n"
    latest = _run(project, "checks", "--json")
    assert latest.exit_code == 0, latest.output
    assert json.loads(latest.stdout) == [{"check_id": "ENOUGH_ORDERS", "passed": True, "detail": ENOUGH, "scope": "order"}]
    assert latest.stderr == f"run {run_id} (the latest)\n"


@spark
def test_check_list(held):
    project, run_id = held
    result = _run(project, "check", "list", "--json")
    assert result.exit_code == 0, result.output
    items = json.loads(result.stdout)
    assert [{k: v for k, v in i.items() if k != "finished_at"} for i in items] == [
        {"run": run_id, "table": "order", "check": "ENOUGH_ORDERS", "outcome": "passed", "rows": None, "kept": 0,
         "on_failure": "advisory", "error": None, "rollback": None}]
    # ISO 8601 in UTC, as on DuckDB and PostgreSQL
    assert re.fullmatch(r"20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", items[0]["finished_at"]), items[0]["finished_at"]


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
    # A key with more deliveries than --limit (decision 0995): O-1 was delivered twice (o-009 won the
    # dedupe). Spark runs the listing order, the count and the correlated count of open reject rows.
    listed = _run(project, "explain", "order", "O-1", "--limit", "1")
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[:2] == [
        "order order_id='O-1': 2 deliveries, 1 of them listed below (the judged one first, then in the dedupe order; "
        "`--limit 0` lists every one).",
        "It is in the entity (published). 0 open reject rows."]
    assert "1. raw_orders row o-009 " in listed.stdout and "... and 1 more delivery of this key, not listed" in listed.stdout


@spark
def test_the_spark_tables_hold_the_samples_rows(held):
    # Read through the module's held Spark (assay's own reader, DuckDB's spelling turned into
    # Spark's): a JVM of its own would cost a start for the same rows.
    project, _ = held
    conn, _ = connect(project, read_only=True)
    cur = conn.cursor()

    def rows(sql: str) -> list[list]:
        cur.execute(sql)
        return [list(r) for r in cur.fetchall()]

    # Spark's CSV reader kept the sample's empty fields as NULL (not the text 'None' that
    # dbt-spark's seeds would load, not empty text).
    assert rows("select count_if(phone is null), count_if(phone in ('', 'None')) from bronze.raw_customers") == [[3, 0]]
    assert rows("select count_if(discount is null), count_if(discount in ('', 'None')) from bronze.raw_orders") == [[1, 0]]
    # customer is a type-2 history (assay_history): its current versions are the sample's customers
    assert rows('select (select count_if(dbt_valid_to is null) from silver.customer), (select count(*) from silver."order")') == [[3, 5]]
    assert rows("select entity, count(*) from (select entity from silver.customer__reject where resolved_at is null "
                "union all select entity from silver.order__reject where resolved_at is null) group by entity order by entity"
                ) == [["customer", 2], ["order", 4]]
    rules = rows("select _source_row_id, disposition, failed_rules from silver.order__reject where resolved_at is null "
                 "union all select _source_row_id, disposition, failed_rules from silver.customer__reject where resolved_at is null "
                 "order by 1")
    # The sample's quarantined rows and the rules that diverted them (docs/quickstart.md).
    assert [(r[0], r[1], _names(r[2])) for r in rules] == [
        ("c-004", "quarantine", ["country_length"]),
        ("c-005", "quarantine", ["tier_coercible"]),
        ("o-004", "quarantine", ["ordered_at_coercible"]),
        ("o-005", "quarantine", ["status_in_enum"]),
        ("o-006", "quarantine", ["amount_coercible"]),
        ("o-007", "quarantine", ["amount_range_min", "discount_not_above_amount"]),
    ]


@spark
def test_a_metastore_another_process_holds_fails_the_command_before_spark_starts(held):
    project, _ = held
    # Another connection (--profiles-dir makes it another) while the module's Spark holds the metastore,
    # as when dbt runs: the command asks the kernel who holds Derby's lock (runtime/derby_lock.py) and
    # refuses without starting a JVM, naming the holder, which is the held session's Java process.
    result = _run(project, "table", "list", "--profiles-dir", str(project))
    assert result.exit_code == 1, result.output
    metastore = project.resolve() / "spark" / "metastore_db"
    said = re.search(rf"Error: Spark cannot open the Derby metastore {re.escape(str(metastore))} of the warehouse of "
                     rf"profile 'shop', target 'dev' \(spark at {re.escape(str(project.resolve()))}/spark/warehouse, "
                     rf"from {re.escape(str(project))}/profiles.yml\): process (\d+) has it open, such as a dbt command "
                     r"still running", result.stderr)
    assert said, result.stderr
    assert b"java" in Path(f"/proc/{said.group(1)}/cmdline").read_bytes()
    # no JVM ran for the refused command: nothing of Java's (Derby's own XSDB6) reaches the user
    assert "Traceback" not in result.output and "Caused by" not in result.stderr and "XSDB6" not in result.stderr
    _no_spark_left(project, str(project))


def _bronze_orders(project: Path) -> dict:
    """source row id -> the bronze row of raw_orders (every column a string, as loaded)."""
    conn, _ = connect(project, read_only=True)  # the module's held Spark
    cur = conn.cursor()
    cur.execute('select * from "bronze"."raw_orders"')
    names = [d[0] for d in cur.description]
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    assert len({r["_source_row_id"] for r in rows}) == len(rows)
    return {r["_source_row_id"]: r for r in rows}


def _age_out(project: Path, srid: str) -> None:
    """Bronze row `srid` of raw_orders ages out. Parquet takes no DELETE: the table is rewritten
    without it, as a retention job on a data lake does (through the held Spark: assay refuses to
    write outside `replay`, the test writes as that job would)."""
    conn, _ = connect(project, read_only=True)
    cur = conn.cursor()
    for sql in (f'create table "bronze"."raw_orders_kept" as select * from "bronze"."raw_orders" where _source_row_id <> \'{srid}\'',
                'truncate table "bronze"."raw_orders"',
                'insert into "bronze"."raw_orders" select * from "bronze"."raw_orders_kept"',
                'drop table "bronze"."raw_orders_kept"'):
        cur.execute(sql)


def _replay(project: Path, *extra: str) -> dict:
    result = _run(project, "replay", "order", "--json", *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@spark
def test_replay_re_delivers_an_open_reject_row_whose_bronze_row_is_gone(held):
    project, _ = held
    # The demo's four open order rejects are all still in bronze: the next build re-judges them.
    assert _replay(project) == {"entity": "order", "dry_run": False, "in_bronze": 4, "needs_full_refresh": 0, "redelivered": {}, "unrecoverable": 0, "superseded": 0}
    before = _bronze_orders(project)
    # o-006 (amount '12,50', quarantined) ages out of bronze
    _age_out(project, "o-006")
    assert "o-006" not in _bronze_orders(project)

    assert _replay(project, "--dry-run") == {"entity": "order", "dry_run": True, "in_bronze": 3, "needs_full_refresh": 0,
                                             "redelivered": {"raw_orders": 1}, "unrecoverable": 0, "superseded": 0}
    assert "o-006" not in _bronze_orders(project)  # a dry run writes nothing
    assert _replay(project)["redelivered"] == {"raw_orders": 1}
    after = _bronze_orders(project)
    # Back from the reject row's raw payload: the same delivery (its own _ingested_at, every field
    # as delivered), under the reserved load id, so the next build judges it like any delivery.
    assert after["o-006"] == {**before["o-006"], "_load_id": "__replay__"}
    assert {k: v for k, v in after.items() if k != "o-006"} == {k: v for k, v in before.items() if k != "o-006"}
    # Now in bronze again: a second replay has nothing to do.
    assert _replay(project)["redelivered"] == {}


def test_maintain_is_refused_before_spark_starts(tmp_path):
    # The example as `assay init` leaves it: the refusal comes before any Spark, built or not.
    project = tmp_path / "shop"
    assert CliRunner().invoke(cli, ["init", str(project), "--engine", "spark"]).exit_code == 0
    result = _run(project, "maintain", "--now", "2027-01-01T00:00:00Z")
    assert result.exit_code == 1, result.output
    assert (f"Error: `assay maintain` cannot run on the Spark warehouse of profile 'shop', target 'dev' "
            f"(spark at {project.resolve()}/spark/warehouse, from {project}/profiles.yml): ") in result.stderr
    assert "Spark's parquet tables take no DELETE or UPDATE" in result.stderr
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


# --- `assay plan OLD --data` on Spark (decision 1020) ----------------------------------------------
# The sandbox is the same code on every engine (plandata/: the next build, the replays, the counts),
# run for real against the real next build on DuckDB and PostgreSQL 18 (test_plan_data_dbt). What is
# Spark's own is the copy: the warehouse directory and the Derby metastore copied as files, the
# profile and the metastore's locations pointed at the copy, tested below without a JVM. A real
# Spark sandbox build ran here until session 35 (69 s of the suite's 15 minutes: its own JVM, a
# Derby metastore's bookkeeping and a whole dbt build); it found the warehouse's files and rows
# unchanged and the plan's numbers equal to counts worked out by hand.

def test_plan_data_copies_a_spark_warehouse_and_points_the_profile_and_the_moves_at_the_copy(tmp_path):
    # No Spark: the example as `assay init` leaves it, with a metastore's marker file and one table file.
    from assay.plandata.sparkcopy import _moved, copy_spark
    from assay.runtime.warehouse import profile_target

    project = (tmp_path / "shop").resolve()
    assert _init(project, "--engine", "spark").exit_code == 0
    found = profile_target(project)
    (project / "spark" / "metastore_db").mkdir()
    (project / "spark" / "metastore_db" / "service.properties").write_text("x")
    (project / "spark" / "metastore_db" / "db.lck").write_text("held")
    (project / "spark" / "warehouse" / "bronze.db" / "raw").mkdir(parents=True)
    (project / "spark" / "warehouse" / "bronze.db" / "raw" / "part-0.parquet").write_bytes(b"rows")
    output, relocation = copy_spark(found.output, found.describe(), tmp_path / "sandbox")
    copy = (tmp_path / "sandbox").resolve()
    params = output["server_side_parameters"]
    assert params["spark.sql.warehouse.dir"] == f"{copy}/warehouse"
    assert params["spark.hadoop.javax.jdo.option.ConnectionURL"] == f"jdbc:derby:;databaseName={copy}/metastore_db;create=true"
    assert params["spark.driver.extraJavaOptions"].startswith(f"-Dderby.system.home={copy} ")
    assert params["spark.hadoop.hive.downloaded.resources.dir"] == f"{copy}/hive_resources"
    assert (copy / "warehouse" / "bronze.db" / "raw" / "part-0.parquet").read_bytes() == b"rows"
    assert not (copy / "metastore_db" / "db.lck").exists()  # the original's lock is not the copy's
    assert relocation["moves"] == {f"{project}/spark/warehouse": f"{copy}/warehouse"}
    # a location under the original warehouse moves under the copy, with or without a scheme; others stay
    assert _moved(f"file:{project}/spark/warehouse/bronze.db", relocation["moves"]) == f"file:{copy}/warehouse/bronze.db"
    assert _moved(f"{project}/spark/warehouse", relocation["moves"]) == f"{copy}/warehouse"
    assert _moved(f"file:{project}/spark/warehouse2/x", relocation["moves"]) is None
    assert _moved("file:/elsewhere/t", relocation["moves"]) is None
