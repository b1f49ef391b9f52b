"""A copy of a Spark warehouse (dbt-spark `method: session`, Derby metastore) for `assay plan --data`
(decision 1020).

The sandbox copies the two directories the profile names, the warehouse (`spark.sql.warehouse.dir`:
the tables' files) and the Derby metastore (`databaseName=` of the metastore's JDBC URL), as
files, and points the sandbox's profile at the copies (and `derby.system.home`, where Derby writes
its log). Copying is not enough: the metastore stores every database's and table's location as an
absolute URI into the ORIGINAL warehouse, and Spark reads and writes there, also for a table it
creates (a database's location is where its new tables go). Spark cannot move a database (`ALTER
DATABASE ... SET LOCATION` needs a Hive 3 metastore; Spark's own is Hive 2.3), so the copied
metastore is rewritten before Spark opens it: in the sandbox's one Spark (the child of
runtime/spark_conn.py, which runs `relocate_metastore` before its first catalog call), through
Derby's JDBC driver, every location under the original warehouse is moved under the copy. Then
Spark itself is asked (`DESCRIBE DATABASE EXTENDED`, `DESCRIBE TABLE EXTENDED`) where every
database and table is, and the child stops with a sentence if any location is outside the copy:
nothing the sandbox does may touch the user's files.

The one child holds Spark for the whole plan: the builds (dbt runs inside it, decision 0841), the
replays and every read.
"""

from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from ..errors import WarehouseError
from ..runtime.derby_url import CONNECTION_URL as _URL
from ..runtime.derby_url import database, with_database

_WAREHOUSE = "spark.sql.warehouse.dir"
_JAVA = "spark.driver.extraJavaOptions"
_RESOURCES = "spark.hadoop.hive.downloaded.resources.dir"
_DERBY_HOME = re.compile(r"(-Dderby\.system\.home=)(\S+)")
# Every column of Hive's metastore schema that holds a location: (table, key columns, value column).
# A Spark data source table keeps its path twice, in SDS and as the serde property `path`.
_LOCATION_COLUMNS = (
    ("DBS", ("DB_ID",), "DB_LOCATION_URI"),
    ("SDS", ("SD_ID",), "LOCATION"),
    ("SERDE_PARAMS", ("SERDE_ID", "PARAM_KEY"), "PARAM_VALUE"),
    ("TABLE_PARAMS", ("TBL_ID", "PARAM_KEY"), "PARAM_VALUE"),
    ("SD_PARAMS", ("SD_ID", "PARAM_KEY"), "PARAM_VALUE"),
    ("PARTITION_PARAMS", ("PART_ID", "PARAM_KEY"), "PARAM_VALUE"),
)
# dbt reads these from the environment before its flags; in the sandbox's Spark they would point
# dbt at the user's own artifacts or packages (DBT_TARGET_PATH: it would overwrite the manifest).
_DBT_PLACES = ("DBT_TARGET_PATH", "DBT_LOG_PATH", "DBT_PROFILES_DIR", "DBT_PROJECT_DIR", "DBT_PACKAGES_INSTALL_PATH")


def spark_places(output: dict, describe: str) -> tuple[Path, Path]:
    """(warehouse dir, Derby metastore dir) a session profile names, both absolute; a WarehouseError
    for a profile whose warehouse the sandbox cannot copy (another metastore, relative paths)."""
    params = output.get("server_side_parameters") or {}
    # the copy's profile names the copied database by rewriting `databaseName=`: the one form it takes
    found = database(str(params.get(_URL, "")))
    warehouse = str(params.get(_WAREHOUSE, ""))
    if output.get("method") != "session" or found is None or not found.by_attribute:
        raise WarehouseError(f"`assay plan --data` copies a Spark warehouse whose metastore is an embedded Derby "
                             f"database (`{_URL}: jdbc:derby:;databaseName=/abs/metastore_db`, as `assay init --engine "
                             f"spark` writes); {describe} is not one (decision 1020).")
    metastore, warehouse_dir = Path(found.name), Path(warehouse.removeprefix("file:"))
    if not (metastore.is_absolute() and warehouse_dir.is_absolute()):
        raise WarehouseError(f"`assay plan --data` copies the Spark warehouse of {describe}, which needs absolute "
                             f"`{_WAREHOUSE}` and Derby `databaseName=` (relative ones depend on where Spark starts).")
    if not (metastore / "service.properties").exists():
        raise WarehouseError(f"the Derby metastore {metastore} of {describe} does not exist: nothing has been built yet. "
                             "Run `dbt build` with the spec as deployed first; `assay plan --data` compares a new spec "
                             "with what that build holds.")
    return warehouse_dir, metastore


def copy_spark(output: dict, describe: str, dest: Path) -> tuple[dict, dict]:
    """Copy the profile's warehouse and metastore under `dest`; (the output pointed at the copies,
    the moves {original warehouse: copy} the child's `relocate_metastore` takes)."""
    warehouse, metastore = spark_places(output, describe)
    dest.mkdir(parents=True)
    new_warehouse, new_metastore = dest / "warehouse", dest / "metastore_db"
    if warehouse.is_dir():
        shutil.copytree(warehouse, new_warehouse, symlinks=True)
    else:
        new_warehouse.mkdir()
    # Derby's lock files belong to the process that booted the original, not to the copy
    shutil.copytree(metastore, new_metastore, ignore=shutil.ignore_patterns("*.lck"))
    params = dict(output.get("server_side_parameters") or {})
    params[_WAREHOUSE] = str(new_warehouse)
    params[_URL] = with_database(str(params[_URL]), str(new_metastore))
    # Hive's resources directory: the sandbox's own, never the user's nor a new one in /tmp
    params[_RESOURCES] = str(dest / "hive_resources")
    java = str(params.get(_JAVA, ""))
    params[_JAVA] = (_DERBY_HOME.sub(lambda m: m.group(1) + str(dest), java) if _DERBY_HOME.search(java)
                     else f"{java} -Dderby.system.home={dest}".strip())
    moves = {str(warehouse): str(new_warehouse)}
    if str(warehouse.resolve()) != str(warehouse):
        moves[str(warehouse.resolve())] = str(new_warehouse)
    return {**output, "server_side_parameters": params}, {"moves": moves, "metastore": str(new_metastore),
                                                          "inside": str(new_warehouse)}


def _moved(value: Optional[str], moves: dict) -> Optional[str]:
    """`value` with a leading location under an original warehouse moved under its copy, else None."""
    if not value:
        return None
    for old, new in sorted(moves.items(), key=lambda kv: -len(kv[0])):
        for scheme in ("file://", "file:", ""):
            prefix = scheme + old
            if value == prefix or value.startswith(prefix + "/"):
                return scheme + new + value[len(prefix):]
    return None


def relocate_metastore(spark, arg: dict) -> None:
    """In the sandbox's Spark, before its catalog opens the metastore: move every location of the
    copied metastore under the copied warehouse (Derby's JDBC driver, in this JVM), then check with
    Spark's own DESCRIBE that every database and table lives under the copy (module docstring)."""
    jvm = spark._jvm
    conn = jvm.org.apache.derby.jdbc.EmbeddedDriver().connect(f"jdbc:derby:;databaseName={arg['metastore']}",
                                                              jvm.java.util.Properties())
    try:
        conn.setAutoCommit(False)
        meta = conn.getMetaData()
        for table, keys, column in _LOCATION_COLUMNS:
            if not meta.getTables(None, "APP", table, None).next():
                continue  # DataNucleus creates a table when first needed
            read = conn.createStatement().executeQuery(
                f'select {", ".join(chr(34) + k + chr(34) for k in keys)}, "{column}" from "APP"."{table}"')
            changes = []
            while read.next():
                moved = _moved(read.getString(len(keys) + 1), arg["moves"])
                if moved is not None:
                    changes.append(([read.getObject(i + 1) for i in range(len(keys))], moved))
            read.close()
            where = " and ".join(f'"{k}" = ?' for k in keys)
            update = conn.prepareStatement(f'update "APP"."{table}" set "{column}" = ? where {where}')
            for key, moved in changes:
                update.setString(1, moved)
                for i, k in enumerate(key):
                    update.setObject(i + 2, k)
                update.executeUpdate()
            update.close()
        conn.commit()
    finally:
        conn.close()
    outside = [where for where in _locations(spark) if _moved(where[1], {arg["inside"]: arg["inside"]}) is None]
    if outside:
        raise RuntimeError(
            "assay plan --data: in the sandbox's copy, these still live outside the copied warehouse directory ("
            + ", ".join(f"{name} at {loc}" for name, loc in outside[:5])
            + "); the plan stops rather than let the sandbox touch them. Tables outside the warehouse directory "
            "(external locations) are not copied by `assay plan --data`; run it on a warehouse without them (decision 1020).")


def _locations(spark) -> list[tuple[str, str]]:
    """(database or table, location) of everything the catalog holds, as Spark describes it (views have none)."""
    from ..identifiers import quote_identifier

    found = []
    for (db,) in spark.sql("show databases").collect():
        qdb = quote_identifier(db, "spark")
        for name, value, *_ in spark.sql(f"describe database extended {qdb}").collect():
            if name == "Location":
                found.append((db, value))
        for r in spark.sql(f"show tables in {qdb}").collect():
            if r.isTemporary:
                continue
            rows = spark.sql(f"describe table extended {qdb}.{quote_identifier(r.tableName, 'spark')}").collect()
            found += [(f"{db}.{r.tableName}", row[1]) for row in rows if row[0] == "Location"]
    return found


@contextmanager
def spark_session(path: Path, relocation: dict) -> Iterator:
    """The sandbox's one Spark (runtime/spark_conn.py's child, held for the block): its metastore
    relocated before it opens; dbt started in it sees none of the environment variables that name
    another place."""
    from ..runtime.spark_conn import held_session

    saved = {k: os.environ.pop(k) for k in _DBT_PLACES if k in os.environ}
    try:
        # the child copies the environment when it starts: it starts without them
        session = held_session(path, path, before=(f"{__name__}:relocate_metastore", relocation))
        child = session.__enter__()
    finally:
        os.environ.update(saved)
    try:
        yield child
    finally:
        session.__exit__(None, None, None)
