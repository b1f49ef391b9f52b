"""Load the example's bronze CSV files into Spark tables with Spark's own CSV reader.

    python load_bronze.py            # replace bronze.raw_customers and bronze.raw_orders with bronze/*.csv
    python load_bronze.py --append   # add the files' rows to the tables: a new delivery, whose rows
                                     # carry a new _load_id (and their own _ingested_at)

Written by `assay init --engine spark` beside profiles.yml; it starts Spark with that profile's
settings (same warehouse directory, same metastore), so run it when no dbt command is running:
the embedded Derby metastore admits one process at a time.

Every column is loaded as a string (the build casts each field to its declared type itself: a
value that does not cast is a finding, not a load failure). The schema is explicit, so a file
whose header names other columns is refused instead of loaded under the wrong names.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml
from pyspark.sql import SparkSession
from pyspark.sql.types import StringType, StructField, StructType

HERE = Path(__file__).resolve().parent

# assay's ingestion metadata columns, which a loader fills (docs/quickstart.md, "Load bronze"),
# then the source's own columns.
METADATA = ["_load_id", "_ingested_at", "_source_row_id"]
TABLES = {
    "raw_customers": METADATA + ["id", "email", "country", "tier", "signed_up", "phone"],
    "raw_orders": METADATA + ["order_ref", "customer", "ts", "state", "price", "discount"],
}


def spark_session() -> SparkSession:
    """Spark as the dbt profile starts it: the profile's `server_side_parameters`, Hive metastore."""
    profiles = yaml.safe_load((HERE / "profiles.yml").read_text(encoding="utf-8"))
    project = yaml.safe_load((HERE / "dbt_project.yml").read_text(encoding="utf-8"))
    profile = profiles[project["profile"]]
    output = profile["outputs"][profile.get("target", "dev")]
    builder = SparkSession.builder.appName("assay bronze loader").enableHiveSupport()
    for key, value in (output.get("server_side_parameters") or {}).items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()


def bronze_schema_name() -> str:
    """`schemas.bronze` of assay.yml (the schema the spec's sources read), else `bronze`."""
    settings = HERE / "assay.yml"
    if settings.exists():
        return ((yaml.safe_load(settings.read_text(encoding="utf-8")) or {}).get("schemas") or {}).get("bronze", "bronze")
    return "bronze"


def read_bronze_csv(spark: SparkSession, path: Path, columns: list[str]):
    """One CSV file as a DataFrame of strings, keeping an empty field (NULL) apart from `""`.

    Spark reads an unquoted empty field as NULL. A quoted `""` is empty text, but Spark turns
    it into NULL too while `nullValue` is the empty string (its default), so `nullValue` is set
    to a character no text holds. `escape='"'` reads a doubled quote inside a quoted field as
    one quote (RFC 4180; Spark's default escape is a backslash). FAILFAST: a row with the wrong
    number of fields stops the load instead of being padded with NULLs.
    """
    schema = StructType([StructField(name, StringType(), nullable=True) for name in columns])
    return spark.read.csv(
        str(path), schema=schema, header=True, enforceSchema=False, nullValue="\u0000",
        escape='"', multiLine=True, mode="FAILFAST", encoding="UTF-8",
    )


def load(spark: SparkSession, append: bool = False) -> dict[str, int]:
    """Load every file of TABLES into the bronze schema on `spark`; rows per table after the load.

    `assay demo --engine spark` calls this on the Spark it runs dbt on (one JVM for the whole demo)."""
    schema = bronze_schema_name()
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{schema}`")
    counts = {}
    for table, columns in TABLES.items():
        frame = read_bronze_csv(spark, HERE / "bronze" / f"{table}.csv", columns)
        # Plain parquet, the format dbt-spark's tables use by default. On a cluster, partition
        # a large bronze table by load (`.partitionBy("_load_id")`), see docs/engines.md.
        frame.write.format("parquet").mode("append" if append else "overwrite").saveAsTable(f"`{schema}`.`{table}`")
        counts[table] = spark.table(f"`{schema}`.`{table}`").count()
        print(f"{schema}.{table}: {counts[table]} rows")
    return counts


def main(argv: list[str]) -> int:
    spark = spark_session()
    try:
        load(spark, append="--append" in argv)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
