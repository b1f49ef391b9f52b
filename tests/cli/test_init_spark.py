"""`assay init --engine spark` and `assay demo --engine spark`: the example on Apache Spark in local mode.

One real run (module-scoped): the demo inits the Spark example, generates, loads bronze with the
project's `load_bronze.py` (Spark's own CSV reader), runs `dbt deps`, `dbt build` and `dbt source
freshness` on dbt-spark's session method, and reads what landed where; a child Spark then reads
the tables themselves. Expectations are the sample's, written by hand (the same outcomes as the
DuckDB demo, tests/cli/test_demo.py; only `grants` is left out on Spark, decision 0822). The
init-only tests start no Spark.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from assay.cli.main import cli


def _init(directory: Path, *extra: str):
    return CliRunner().invoke(cli, ["init", str(directory), *extra])


def test_init_spark_writes_a_session_profile_with_absolute_paths_and_the_loader(tmp_path):
    result = _init(tmp_path / "shop", "--engine", "spark")
    assert result.exit_code == 0, result.output
    project = (tmp_path / "shop").resolve()
    output = yaml.safe_load((project / "profiles.yml").read_text())["shop"]["outputs"]["dev"]
    assert (output["type"], output["method"], output["threads"]) == ("spark", "session", 1)
    params = output["server_side_parameters"]
    # Absolute, under the project: dbt, the loader and assay find one warehouse from any directory.
    assert params["spark.sql.warehouse.dir"] == f"{project}/spark/warehouse"
    assert params["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={project}/spark/metastore_db;create=true")
    # derby.log goes there; Spark logs errors only (at warn, every dbt node prints a line of it)
    assert params["spark.driver.extraJavaOptions"] == (
        f"-Dderby.system.home={project}/spark -Dlog4j2.configurationFile=file:{project}/spark/log4j2.properties")
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
    assert sorted(p.name for p in (project / "spark").iterdir()) == ["derby.log", "log4j2.properties", "metastore_db", "warehouse"]
    assert not (project / "derby.log").exists() and not (project / "spark-warehouse").exists()


@pytest.mark.slow
@pytest.mark.spark
def test_the_spark_tables_hold_the_samples_rows(spark_demo):
    from assay.runtime import spark

    base, result = spark_demo
    assert result.exit_code == 0, result.output
    bronze_nulls, bronze_empty, entities, rejects, rules = spark.query(base / "shop", [
        # Spark's CSV reader kept the sample's empty fields as NULL (not the text 'None' that
        # dbt-spark's seeds would load, not empty text).
        "select count_if(phone is null), count_if(phone in ('', 'None')) from bronze.raw_customers",
        "select count_if(discount is null), count_if(discount in ('', 'None')) from bronze.raw_orders",
        # customer is a type-2 history (assay_history): its current versions are the sample's customers
        "select (select count_if(dbt_valid_to is null) from silver.customer), (select count(*) from silver.`order`)",
        "select entity, count(*) from (select entity from silver.customer__reject where resolved_at is null "
        "union all select entity from silver.order__reject where resolved_at is null) group by entity order by entity",
        "select _source_row_id, disposition, failed_rules from silver.order__reject where resolved_at is null "
        "union all select _source_row_id, disposition, failed_rules from silver.customer__reject where resolved_at is null "
        "order by 1",
    ])
    assert bronze_nulls == [[3, 0]]
    assert bronze_empty == [[1, 0]]
    assert entities == [[3, 5]]
    assert rejects == [["customer", 2], ["order", 4]]
    # The sample's quarantined rows and the rules that diverted them (docs/quickstart.md).
    assert [(r[0], r[1], _names(r[2])) for r in rules] == [
        ("c-004", "quarantine", ["country_length"]),
        ("c-005", "quarantine", ["tier_coercible"]),
        ("o-004", "quarantine", ["ordered_at_coercible"]),
        ("o-005", "quarantine", ["status_in_enum"]),
        ("o-006", "quarantine", ["amount_coercible"]),
        ("o-007", "quarantine", ["amount_range_min", "discount_not_above_amount"]),
    ]


def _names(failed_rules) -> list[str]:
    """The rule names of a reject row's `failed_rules`: an array on Spark, read back as a list."""
    return sorted(failed_rules) if isinstance(failed_rules, list) else sorted(str(failed_rules).strip("[]").replace(" ", "").split(","))
