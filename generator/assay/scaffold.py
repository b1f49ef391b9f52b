"""Skeleton files of a dbt project that assay can generate into (used by `assay init` and tests)."""

from __future__ import annotations

from pathlib import Path

GENERATE_SCHEMA_NAME = """{#
  Schemas exactly as named (silver, gold, ...), not prefixed with the target schema.
  assay's spec names the schemas a warehouse uses; this keeps them.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
"""


def dbt_project_yml(name: str) -> str:
    return f"""name: {name}
version: "1.0.0"
config-version: 2
profile: {name}

model-paths: ["models"]
snapshot-paths: ["snapshots"]
macro-paths: ["macros"]
test-paths: ["tests"]
seed-paths: ["seeds"]

on-run-start:
  - "{{{{ assay.install_functions() }}}}"

flags:
  send_anonymous_usage_stats: false
"""


def duckdb_profile(name: str, path: str = "warehouse.duckdb", schema: str = "main") -> str:
    return f"""{name}:
  target: dev
  outputs:
    dev:
      type: duckdb
      path: {path}
      schema: {schema}
      threads: 4
"""


def postgres_profile(name: str, host: str, port: int, user: str, password: str, dbname: str, schema: str = "public") -> str:
    return f"""{name}:
  target: dev
  outputs:
    dev:
      type: postgres
      host: {host}
      port: {port}
      user: {user}
      password: "{password}"
      dbname: {dbname}
      schema: {schema}
      threads: 4
"""


# The JVM settings of Spark in local mode on an example's data: the JIT's first tier only and the
# serial collector. Such a session spends its time starting and planning small queries, not in
# hot loops; the optimising compiler's threads cost about a third of its CPU and slow its start
# (measured: a local build's CPU 100 s -> 67 s, its first build 18 s -> 13 s). For large data in
# local mode, remove them (docs/engines.md). The first tier alone reserves a 48 MB code cache,
# which a long session filled ("Out of space in CodeCache", an outside tester, session 36): the
# cache is reserved at the size the full JIT has (reserved address space, used as it fills).
SPARK_LOCAL_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"


def spark_profile(name: str, spark_dir: str, schema: str = "default") -> str:
    """A dbt-spark `session` profile: Spark in local mode inside the dbt process (decision 0820).

    `spark_dir` is absolute: the warehouse files, the Derby metastore and Spark's log settings
    (`write_spark_log_config`) live under it, so dbt,
    the bronze loader and assay find the same tables from any working directory (as the DuckDB
    profile names its file by an absolute path, decision 0017). Derby allows one process at a
    time: run dbt and the loader one after another. `to_json` keeps NULL members, so a reject
    row's `raw` names every column, as on DuckDB and PostgreSQL. Hive's session directory for
    downloaded resources is under `spark_dir` too: by default every Spark process makes a new
    `<uuid>_resources` in the system's temporary directory and, stopped as pyspark stops it, never
    removes it.
    """
    return f"""{name}:
  target: dev
  outputs:
    dev:
      type: spark
      method: session
      host: NA
      schema: {schema}
      threads: 2
      server_side_parameters:
        spark.master: "local[2]"
        spark.driver.memory: "3g"
        spark.sql.warehouse.dir: "{spark_dir}/warehouse"
        spark.hadoop.javax.jdo.option.ConnectionURL: "jdbc:derby:;databaseName={spark_dir}/metastore_db;create=true"
        spark.hadoop.hive.downloaded.resources.dir: "{spark_dir}/hive_resources"
        spark.driver.extraJavaOptions: "-Dderby.system.home={spark_dir} -Dlog4j2.configurationFile=file:{spark_dir}/log4j2.properties {SPARK_LOCAL_JVM_OPTIONS}"
        spark.ui.enabled: "false"
        spark.ui.showConsoleProgress: "false"
        spark.sql.shuffle.partitions: "2"
        spark.sql.session.timeZone: "UTC"
        spark.sql.jsonGenerator.ignoreNullFields: "false"
"""


# Spark's log at error level: at its default (warn) every dbt node prints "Using an existing Spark
# session" and the local setup's warnings between dbt's own lines. The metastore and parquet
# loggers keep the levels of Spark's own defaults (a CREATE DATABASE IF NOT EXISTS of an existing
# schema is logged as an error by the Hive metastore otherwise).
SPARK_LOG4J2 = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
logger.metastore.name = org.apache.hadoop.hive.metastore.RetryingHMSHandler
logger.metastore.level = fatal
logger.metastore2.name = org.apache.hadoop.hive.metastore.ObjectStore
logger.metastore2.level = error
logger.parquet.name = org.apache.parquet.CorruptStatistics
logger.parquet.level = error
"""


def write_spark_log_config(spark_dir: Path) -> None:
    """`<spark_dir>/log4j2.properties`, which the profile of `spark_profile` names."""
    Path(spark_dir).mkdir(parents=True, exist_ok=True)
    (Path(spark_dir) / "log4j2.properties").write_text(SPARK_LOG4J2, encoding="utf-8")


def write_dbt_skeleton(directory: Path, name: str, profile: str) -> None:
    """A minimal dbt project: dbt_project.yml, profiles.yml, the schema-name macro."""
    directory = Path(directory)
    (directory / "macros").mkdir(parents=True, exist_ok=True)
    for sub in ("models", "snapshots", "tests", "seeds"):
        (directory / sub).mkdir(exist_ok=True)
    (directory / "dbt_project.yml").write_text(dbt_project_yml(name), encoding="utf-8")
    (directory / "profiles.yml").write_text(profile, encoding="utf-8")
    (directory / "macros" / "generate_schema_name.sql").write_text(GENERATE_SCHEMA_NAME, encoding="utf-8")
