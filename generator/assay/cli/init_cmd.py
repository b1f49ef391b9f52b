"""`assay init DIR` (a runnable example project) and `assay demo DIR` (init, generate, build, report)."""

from __future__ import annotations

import shutil
from contextlib import ExitStack
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Optional

import click

from ..artifacts import record_spec_dir
from ..errors import AssayError, ChecksFailed, ProjectError
from ..scaffold import duckdb_profile, spark_profile, write_dbt_skeleton, write_spark_log_config
from .common import Progress, plural, shown

TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "shop"
SPARK_LOADER = Path(__file__).resolve().parents[1] / "templates" / "spark" / "load_bronze.py"
ENGINES = ("duckdb", "spark")
ENGINE_OPTION = click.option(
    "--engine", type=click.Choice(ENGINES), default="duckdb", show_default=True,
    help="The warehouse of the example: DuckDB (a file), or Apache Spark in local mode (dbt-spark `session`, "
         "parquet tables; needs `pip install -e '.[spark]'` in assay's checkout and Java 17).")


def init_project(directory: Path, now: Optional[datetime] = None, engine: str = "duckdb") -> None:
    """Copy the example spec and bronze sample, and make a dbt project with a DuckDB or Spark profile beside it.

    The sample's `_ingested_at` values are moved so that the newest delivery is an hour before
    `now` (gaps between loads kept): loaded by hand within the freshness thresholds of the example
    (6 hours for orders), `dbt source freshness` passes (decision 0016). The profile names the
    DuckDB file (or Spark's warehouse directory and metastore, under `spark/`) by its absolute
    path, so dbt finds the same warehouse from any directory. On Spark the project also gets
    `load_bronze.py`, which loads bronze/*.csv with Spark's own CSV reader (decision 0820).
    """
    from ..runtime.bronze import restamp_csv_dir

    directory.mkdir(parents=True, exist_ok=True)
    for item in ("assay.yml", "spec", "bronze"):
        src = TEMPLATE / item
        dst = directory / item
        if dst.exists():
            continue
        if src.is_dir():
            shutil.copytree(src, dst)
            if item == "bronze":
                restamp_csv_dir(dst, (now or datetime.now(timezone.utc)) - timedelta(hours=1))
            if item == "spec" and engine == "spark":
                _spark_spec(dst / "entities.yml")
        else:
            shutil.copy2(src, dst)
    if not (directory / "dbt_project.yml").exists():
        if engine == "spark":
            write_dbt_skeleton(directory, "shop", spark_profile("shop", (directory / "spark").resolve().as_posix()))
            write_spark_log_config(directory / "spark")
        else:
            warehouse = (directory / "warehouse.duckdb").resolve()
            write_dbt_skeleton(directory, "shop", duckdb_profile("shop", warehouse.as_posix()))
    if engine == "spark" and not (directory / "load_bronze.py").exists():
        shutil.copy2(SPARK_LOADER, directory / "load_bronze.py")


# What the example's spec asks for that open-source Spark cannot build (decision 0822): each
# line is kept, commented out, with the reason and what brings it back. (Type-2 history builds
# on parquet through assay_history, decision 0807.)
SPARK_SPEC_EDITS = (
    ("    grants: {select: [reporter]}\n",
     "    # grants: {select: [reporter]}   # open-source Spark has no GRANT (Databricks has): put it back there.\n"),
)


def _spark_spec(entities: Path) -> None:
    """The example's spec as open-source Spark builds it: no grants (decision 0822)."""
    text = entities.read_text(encoding="utf-8")
    for old, new in SPARK_SPEC_EDITS:
        if old not in text:  # the template changed: the edit must be revisited, not silently skipped
            raise ProjectError(f"the example's spec no longer holds {old.strip()!r}; assay's Spark example needs updating.")
        text = text.replace(old, new, 1)
    entities.write_text(text, encoding="utf-8")


def _profile_engine(directory: Path) -> Optional[str]:
    """The engine of an earlier example's profile (`duckdb`, `spark`), None when there is none yet."""
    import yaml

    path = directory / "profiles.yml"
    if not path.exists():
        return None
    try:
        profiles = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        return profiles["shop"]["outputs"][profiles["shop"].get("target", "dev")]["type"]
    except (yaml.YAMLError, KeyError, TypeError):
        return None


def _refuse_other_engine(directory: Path, engine: str) -> None:
    # Re-running init (or the demo) on an earlier example keeps its files; one made for the other
    # engine would keep its profile, and the command would quietly run on an engine not asked for.
    found = _profile_engine(directory)
    if found is not None and found != engine:
        raise click.BadParameter(f"{directory} holds an example made for {found} (its profiles.yml); "
                                 f"pick a new directory for the {engine} example, or pass --engine {found}.",
                                 param_hint="--engine")


def _refuse_foreign(directory: Path) -> None:
    # The example is copied only into a new directory or one holding an earlier example:
    # anything else is somebody's work, which init must not mix files into.
    if directory.exists() and any(directory.iterdir()) and not (directory / "assay.yml").exists():
        raise click.BadParameter(f"{directory} is not empty and holds no assay example; pick a new directory for the example project.",
                                 param_hint="DIRECTORY")


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@ENGINE_OPTION
def init_cmd(directory: Path, engine: str) -> None:
    """Scaffold a runnable example: spec, bronze sample data with real defects, a dbt project on DuckDB (or Spark)."""
    _refuse_foreign(directory)
    _refuse_other_engine(directory, engine)
    init_project(directory, engine=engine)
    where = shown(directory)
    if engine == "spark":
        click.echo(f"assay init: example project in {where} (spec: assay.yml and spec/; bronze sample: bronze/; "
                   f"dbt project on Spark, local mode: warehouse and metastore in {shown((directory / 'spark').resolve())}; "
                   "bronze loader: load_bronze.py)")
        click.echo(f"next: cd {where} && python load_bronze.py && assay generate dbt && dbt deps && dbt build "
                   "(one at a time: the metastore admits one process; docs/engines.md)")
        return
    click.echo(f"assay init: example project in {where} (spec: assay.yml and spec/; bronze sample: bronze/; "
               f"dbt project on DuckDB: {shown((directory / 'warehouse.duckdb').resolve())})")
    click.echo(f"next: load bronze/*.csv into the bronze schema (docs/quickstart.md), then assay generate dbt --project {where}")


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@ENGINE_OPTION
def demo_cmd(directory: Path, engine: str) -> None:
    """Run the example end to end on DuckDB (or Spark): init, generate, load bronze, dbt build, dbt source freshness.

    Exit 0 when the build passed, 2 when it ran but blocking checks did not pass, 1 when dbt
    could not run the project (its own error lines are printed).
    """
    from ..api import generate_dbt_project
    from ..runtime.bronze import load_csv_dir_duckdb
    from ..runtime.dbt import run_dbt, run_dbt_step
    from ..runtime.operator import open_warehouse
    from ..runtime.report import format_counts, landing_counts
    from ..runtime.warehouse import warehouse_errors

    # Absolute from here on: dbt runs with the project as its working directory, where a
    # path relative to the caller's directory would point somewhere else.
    directory = directory.resolve()
    _refuse_foreign(directory)
    _refuse_other_engine(directory, engine)
    if engine == "spark":
        _require_spark()
    with Progress("demo", 6) as progress, ExitStack() as stack:
        progress.step("init and generate")
        init_project(directory, engine=engine)
        result = generate_dbt_project(directory, directory)
        if result.report.refused:
            from .generate_cmd import _refuse

            _refuse(result, directory)
        record_spec_dir(directory, directory)
        r = result.report
        progress.echo(f"1. generate: {len(r.written)} files written, {len(r.unchanged)} unchanged "
                      f"({plural(len(result.project.entities), 'entity', 'entities')})")
        database = directory / "warehouse.duckdb" if engine == "duckdb" else directory / "spark"
        progress.step("loading the bronze sample")
        run = run_dbt
        if engine == "spark":
            from ..runtime.spark_conn import held_session

            # ONE Spark for the loader, every dbt step and the counts (a JVM start is 15 to 20 s, and
            # the Derby metastore admits one process): it stops when the demo ends, also on failure.
            child = stack.enter_context(held_session(directory))
            run = child.dbt
            loaded = _load_bronze_spark(directory, child)
        else:
            with warehouse_errors(f"cannot load the bronze sample into {database}"):
                loaded = load_csv_dir_duckdb(database, directory / "bronze", result.project.schema("bronze"))
        progress.echo("2. bronze: " + ", ".join(f"{k} {plural(v, 'row')}" for k, v in loaded.items()))
        for step, args in (("3. dbt deps", ("deps",)), ("4. dbt build", ("build",))):
            progress.step(f"dbt {' '.join(args)}")
            built = run_dbt_step(directory, *args, run=run)
            progress.echo(f"{step}: {'ok' if built.ok else 'FAILED'} {built.summary()}".rstrip())
            if built.invocation_id and args == ("build",):
                # The id `assay checks` and `assay check list` know this build by.
                progress.echo(f"   run id: {built.invocation_id}")
            if not built.ok:
                raise _dbt_failed(built, directory)
        progress.step("dbt source freshness")
        fresh = run_dbt_step(directory, "source", "freshness", run=run)
        progress.echo("5. dbt source freshness: " + ("ok" if fresh.ok else "FAILED"))
        # dbt checks sources on several threads; sorted, the lines read in dbt's own numbering.
        for line in sorted(fresh.freshness_lines(), key=lambda x: int(x.split(" ", 1)[0]) if x[:1].isdigit() else 0):
            progress.echo("     " + line)
        progress.step("reading what landed where")
        with warehouse_errors(f"cannot read what landed where from {database}"), \
                open_warehouse(result.project, directory) as wh:
            counts = format_counts(landing_counts(wh.reader, wh.project))
    click.echo("\nWhat landed where:")
    click.echo(counts)
    click.echo(f"\nReject rows: silver.<entity>__reject; quality history: {result.project.schema('gold')}.mart_data_quality (in {database if engine == 'duckdb' else 'the Spark warehouse under ' + str(database)})")
    if engine == "spark":
        # dbt builds again from a shell; the operator commands start their own Spark (decision 0840).
        click.echo(f"next: cd {directory} && dbt build   (again: reject and quality history grow); "
                   "Spark and a cluster: docs/engines.md")
    else:
        click.echo(f"next: assay checks --project {directory}   (this build's check results); "
                   f"assay report --project {directory}   (an HTML page of what the build did)")
    if not fresh.ok:
        raise _dbt_failed(fresh, directory)


def _require_spark() -> None:
    """Refuse the Spark demo before it starts when dbt-spark, pyspark or Java is missing, saying what to install."""
    import os

    missing = [name for name, module in (("pyspark", "pyspark"), ("dbt-spark", "dbt.adapters.spark")) if _no_module(module)]
    if missing:
        raise ProjectError(f"the Spark example needs {' and '.join(missing)}, which this environment lacks; "
                           "install them with: pip install -e '.[spark]' in assay's checkout (or: pip install 'dbt-spark[session]' pyspark).")
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        raise ProjectError("the Spark example needs a Java runtime (Java 17) and none was found (no JAVA_HOME, no `java` "
                           "on PATH); install one (Debian: apt-get install openjdk-17-jre-headless).")


def _no_module(dotted: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(dotted) is None
    except ModuleNotFoundError:
        return True


def _load_bronze_spark(directory: Path, child) -> dict[str, int]:
    """Run the project's `load_bronze.py` (Spark's CSV reader) on the demo's Spark child; rows loaded per table."""
    from ..runtime.bronze import restamp_csv_dir
    from ..runtime.spark_conn import SparkQueryError

    # As the DuckDB demo's loader does: the newest delivery an hour ago, so a demo re-run days
    # after `init` still passes freshness (decision 0016). The script loads the files as they are.
    restamp_csv_dir(directory / "bronze", datetime.now(timezone.utc) - timedelta(hours=1))
    try:
        return child.load_bronze(directory)
    except SparkQueryError as exc:
        raise ProjectError(f"the project's loader (`load_bronze.py`, its `load`) failed in {directory}: {exc}. "
                           f"Fix what it names and run `assay demo {directory} --engine spark` again.") from None


def _dbt_failed(run, directory: Path) -> AssayError:
    """The error a failed dbt step of the demo ends with, carrying dbt's own error lines."""
    command = "dbt " + " ".join(run.args)
    details = [f"  {line}" for line in run.error_lines()]
    if run.checks_failed():
        return ChecksFailed(
            f"`{command}` ran, but checks did not pass (dbt's report is above): the tables they guard were not "
            "published. The rows that failed are in the candidate tables and silver.<entity>__reject; "
            f"`assay check list --project {directory}` shows every result.",
            details=details,
        )
    return ProjectError(
        f"`{command}` failed in {directory} (dbt exit code {run.returncode}); dbt's own error is above. "
        f"Fix what it names and run `assay demo {directory}` again.",
        details=details,
    )


COMMANDS = (init_cmd, demo_cmd)
