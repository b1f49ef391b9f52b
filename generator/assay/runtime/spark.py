"""Reading a Spark (dbt-spark `session`) warehouse from assay: queries run in a child Python.

A dbt-spark session profile starts Spark inside the process that uses it, with an embedded Derby
metastore that admits one process at a time. assay's commands therefore never start Spark in
their own process: a child `python -m assay.runtime.spark PROJECT` starts it from the project's
profile, runs the queries it is given on stdin (a JSON list of SQL texts) and prints their rows
as JSON. The JVM and the metastore lock end with the child, so dbt (or the bronze loader) can
run next, and a long-lived process such as a test runner never holds a Spark session whose
static settings (warehouse directory, metastore) belong to one project (decision 0821).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

from ..errors import WarehouseError


def session_settings(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> dict[str, str]:
    """The Spark settings the project's dbt profile starts its session with (`server_side_parameters`).

    dbt-spark turns ANSI mode off in every session it starts; so does assay, so that a query
    reads the tables under the rules the build wrote them with.
    """
    from .warehouse import profile_target

    target = profile_target(Path(project_dir), profiles_dir, target)
    if target.output.get("type") != "spark" or target.output.get("method") != "session":
        raise WarehouseError(f"{target.describe()} is not a dbt-spark `method: session` profile; "
                             "assay reads Spark warehouses through such a profile (docs/engines.md).")
    settings = {str(k): str(v) for k, v in (target.output.get("server_side_parameters") or {}).items()}
    settings["spark.sql.ansi.enabled"] = "false"
    return settings


def query(project_dir: Path, queries: list[str], timeout: float = 600) -> list[list[list]]:
    """Run `queries` on the project's Spark in a child process; the rows of each, as lists."""
    project_dir = Path(project_dir).resolve()
    session_settings(project_dir)  # a profile that is not Spark is refused here, with its reason
    run = subprocess.run([sys.executable, "-m", "assay.runtime.spark", str(project_dir)], input=json.dumps(queries),
                         capture_output=True, text=True, cwd=project_dir, timeout=timeout)
    if run.returncode != 0:
        # Spark's own error is the last lines of the child's stderr (a Java stack trace before it).
        tail = [line for line in run.stderr.splitlines() if line.strip()][-6:]
        raise WarehouseError(f"Spark failed reading the warehouse of {project_dir}; its error is above (when it names "
                             "the metastore or Derby, another process holds it, such as a dbt command still running: "
                             "the Derby metastore admits one process at a time)", details=["  " + x for x in tail])
    return json.loads(run.stdout.strip().splitlines()[-1])


def landing_counts(project_dir: Path, project) -> list[dict]:
    """One row per entity (bronze, kept, flagged, quarantined, deduped), as `assay demo` prints them."""
    silver = project.schema("silver")
    sql, order = [], []
    for e in project.entities:
        table = f"{e.name}__current" if e.scd == "type2" else e.name
        staged = f"`{silver}`.`{e.name}__staged`"
        sql.append(f"select count(*), count_if(_route = 'deduped') from {staged}")
        if e.opted_in:
            sql.append(f"select count(*), count_if(not _quality_ok) from `{silver}`.`{table}`")
            sql.append(f"select count(*) from `{silver}`.`{e.name}__reject` where resolved_at is null")
        else:
            sql.append(f"select count(*), 0 from `{silver}`.`{table}`")
            sql.append("select 0")
        order.append(e.name)
    rows = query(project_dir, sql)
    out = []
    for i, name in enumerate(order):
        (bronze, deduped), (kept, flagged), (quarantined,) = (rows[3 * i][0], rows[3 * i + 1][0], rows[3 * i + 2][0])
        out.append({"entity": name, "bronze": bronze, "kept": kept, "flagged": flagged,
                    "quarantined": quarantined, "deduped": deduped})
    return out


def _main(argv: list[str]) -> int:
    """The child: start Spark from the profile of argv[0], run the JSON list of queries on stdin."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.appName("assay").enableHiveSupport()
    for key, value in session_settings(Path(argv[0])).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        results = [[list(r) for r in spark.sql(q).collect()] for q in json.loads(sys.stdin.read())]
    finally:
        spark.stop()
    print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
