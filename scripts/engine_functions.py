"""Write generator/assay/engine_functions/<engine>.txt: the names each engine assay runs on can
call, read from the engines themselves (decision 1151). Validation warns of (dbt) or refuses
(SQLMesh on that engine) an expression rule whose text, as sqlglot writes it for an engine, calls
a name the engine lacks.

Usage: PYTHONPATH=generator:tests python scripts/engine_functions.py [duckdb postgres15 postgres18 spark]

Each file holds one name per line, sorted, after a first line `# <engine> <version>`. The names
are the engine's callable functions (scalar functions and macros: an expression rule judges one
row) and the call-shaped syntax sqlglot writes as a call (`cast(...)`, `coalesce(...)`), each
kept only where the engine runs a sample of it.
"""

from __future__ import annotations

import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "generator" / "assay" / "engine_functions"

# Call-shaped syntax no catalog lists: kept for an engine that runs the sample.
SYNTAX = {
    "cast": "cast(1 as int)",
    "try_cast": "try_cast('1' as int)",
    "extract": "extract(year from date '2020-01-02')",
    "coalesce": "coalesce(1, 2)",
    "nullif": "nullif(1, 2)",
    "greatest": "greatest(1, 2)",
    "least": "least(1, 2)",
    "if": "if(true, 1, 2)",
    "trim": "trim(' a ')",
    "substring": "substring('abc', 1, 2)",
    "position": "position('a' in 'abc')",
    "overlay": "overlay('abc' placing 'x' from 1 for 1)",
    "left": "left('abc', 1)",
    "right": "right('abc', 1)",
}


def _write(engine: str, version: str, names: set[str], runs) -> None:
    names = {n.lower() for n in names if n and n.replace("_", "a").isalnum()}
    names |= {word for word, sample in SYNTAX.items() if runs(f"select {sample}")}
    path = OUT / f"{engine}.txt"
    path.write_text(f"# {engine} {version}\n" + "".join(f"{n}\n" for n in sorted(names)))
    print(f"{path}: {len(names)} names")


def _runs_on(execute):
    def runs(sql: str) -> bool:
        try:
            execute(sql)
            return True
        except Exception:  # the engine's own error: the sample does not run there
            return False
    return runs


def duckdb_names() -> None:
    import duckdb

    con = duckdb.connect()
    rows = con.execute("select distinct function_name from duckdb_functions() "
                       "where function_type in ('scalar', 'macro')").fetchall()
    _write("duckdb", duckdb.__version__, {r[0] for r in rows}, _runs_on(lambda s: con.execute(s).fetchall()))


def postgres_names(label: str) -> None:
    from support.pg import embedded_bin_dir, start_server, system_bin_dir

    bin_dir = embedded_bin_dir() if label == "postgres18" else system_bin_dir()
    if bin_dir is None:
        raise SystemExit(f"no PostgreSQL server for {label}")
    server = start_server(f"functions-{label}", bin_dir)
    try:
        con = server.connect()
        con.autocommit = True
        cur = con.cursor()
        # Ordinary functions (prokind 'f'): the ones a row's expression calls.
        cur.execute("select distinct proname from pg_proc where prokind = 'f' and pronamespace = 'pg_catalog'::regnamespace")
        names = {r[0] for r in cur.fetchall()}

        def execute(sql):
            cur.execute(sql)
            cur.fetchall()

        cur.execute("show server_version")
        _write(label, cur.fetchone()[0].split()[0], names, _runs_on(execute))
        con.close()
    finally:
        server.stop()


def spark_names() -> None:
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.master("local[1]").appName("assay-functions").getOrCreate()
    try:
        rows = spark.sql("show functions").collect()
        _write("spark", spark.version, {r[0] for r in rows}, _runs_on(lambda s: spark.sql(s).collect()))
    finally:
        spark.stop()


def main(argv: list[str]) -> None:
    engines = argv or ["duckdb", "postgres15", "postgres18", "spark"]
    for engine in engines:
        if engine == "duckdb":
            duckdb_names()
        elif engine in ("postgres15", "postgres18"):
            postgres_names(engine)
        elif engine == "spark":
            spark_names()
        else:
            raise SystemExit(f"unknown engine {engine}")


if __name__ == "__main__":
    main(sys.argv[1:])
