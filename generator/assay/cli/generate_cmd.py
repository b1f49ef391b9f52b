"""`assay generate dbt|sqlmesh [--project DIR] [--spec DIR] [--force]`."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Optional

import click

from ..api_sqlmesh import DEFAULT_DIALECT
from ..artifacts import overwriting_edits, record_spec_dir
from ..errors import ProjectError
from ..runtime.built_relations import schema_override
from ..targets.sqlmesh import DIALECTS
from .common import Directory, build_command, json_option, plural, resolve_spec, shown

@click.group("generate")
def generate() -> None:
    """Write the files assay owns into a dbt or SQLMesh project."""


def _refuse(result, project_dir: Path) -> None:
    r = result.report
    if r.links:
        raise ProjectError(
            f"{plural(len(r.links), 'path')} where assay writes {'is a symbolic link' if len(r.links) == 1 else 'are symbolic links'} "
            f"in {shown(project_dir)}; nothing was written. assay writes only regular files inside the project, never "
            "through a link (it would write wherever the link points): remove "
            f"{'it' if len(r.links) == 1 else 'them'} and run `assay generate` again.",
            details=[f"{shown(project_dir / rel)}: a symbolic link" for rel in r.links],
        )
    if r.conflicts:
        raise ProjectError(
            f"{plural(len(r.conflicts), 'file')} that assay generates already "
            f"{'exists' if len(r.conflicts) == 1 else 'exist'} in {shown(project_dir)} and "
            f"{'is' if len(r.conflicts) == 1 else 'are'} not assay's; nothing was written. Move "
            f"{'it' if len(r.conflicts) == 1 else 'them'} away or remove "
            f"{'it' if len(r.conflicts) == 1 else 'them'} and run `assay generate` again: assay never overwrites your files.",
            details=[f"{shown(project_dir / rel)}: exists and is not assay's" for rel in r.conflicts],
        )
    if r.refused and r.modified:
        n = len(r.modified)
        raise ProjectError(
            f"{plural(n, 'generated file')} {'was' if n == 1 else 'were'} edited since assay wrote "
            f"{'it' if n == 1 else 'them'}; nothing was written. Generated files are rewritten from the spec, "
            "so put the change in the spec (or in a file of your own) and run `assay generate` again; "
            "pass --force to overwrite the edits.",
            details=[f"{shown(project_dir / rel)}: edited since assay generated it" for rel in r.modified],
        )


def _summary(result, spec_dir: Path, forced: list[str]) -> None:
    r = result.report
    click.echo(
        f"assay generate: {len(r.written)} written, {len(r.unchanged)} unchanged, {len(r.removed)} removed "
        f"({plural(len(result.project.entities), 'entity', 'entities')}, spec {shown(spec_dir)} {result.project.fingerprint})"
    )
    if forced:
        click.echo(f"overwrote your edits of {', '.join(forced)} (--force)")


def dbt_landing(project_dir: Path, project) -> tuple[dict[str, Optional[str]], str]:
    """Where the generated tables will land, after the project's `generate_schema_name`:
    ({silver|gold|meta: schema, or None when the project's own macro decides}, a sentence)."""
    from ..errors import AssayError
    from ..scaffold import GENERATE_SCHEMA_NAME

    roles = [("silver", "entities, staged and reject tables"), ("gold", "mart_data_quality"), ("meta", "check results, events")]
    custom = [(project.schema(role), what) for role, what in roles]
    reads = f"bronze is read from {project.schema('bronze')}"
    override = schema_override(project_dir)
    if override is not None and override.read_text(encoding="utf-8", errors="replace").strip() == GENERATE_SCHEMA_NAME.strip():
        return ({role: project.schema(role) for role, _ in roles},
                "tables land in " + ", ".join(f"{s} ({what})" for s, what in custom) + f"; {reads}")
    if override is not None:
        return ({role: None for role, _ in roles},
                f"tables land where your generate_schema_name ({shown(override)}) puts the custom schemas "
                + ", ".join(s for s, _ in custom) + f"; {reads}. assay's commands read them where dbt's target/manifest.json says they were built")
    try:
        from ..runtime.warehouse import profile_output

        target = str(profile_output(project_dir).get("schema") or "<target schema>")
    except AssayError:  # no profile yet: the message still says how the names are formed
        target = "<target schema>"
    return ({role: f"{target}_{project.schema(role)}" for role, _ in roles},
            "tables land in " + ", ".join(f"{target}_{s} ({what})" for s, what in custom)
            + f": the project has no generate_schema_name, and dbt's default prefixes the target schema; {reads}. "
            "assay's commands read them there; to keep the names as in assay.yml, add macros/generate_schema_name.sql "
            "as `assay init` writes it")


def _as_json(result, spec_dir: Path, project_dir: Path, target: str, schemas: dict, landing: str, next_step: str,
             **extra) -> None:
    r = result.report
    click.echo(json.dumps({
        "target": target, "project": shown(project_dir), "spec": shown(spec_dir), "fingerprint": result.project.fingerprint,
        "entities": [e.name for e in result.project.entities], "written": r.written, "unchanged": len(r.unchanged),
        "removed": r.removed, "overwrote_edits": r.modified, "schemas": schemas, "landing": landing, "next": next_step,
        **extra,
    }, indent=2))


def _next_dbt(project_dir: Path) -> str:
    where = shown(project_dir)
    if where == ".":
        return "next: dbt deps && dbt build   (then `assay report`)"
    return (f"next: cd {where} && dbt deps && dbt build   (or from here: dbt deps --project-dir {where} "
            f"--profiles-dir {where}, then the same for dbt build; then `assay report --project {where}`)")


@generate.command("dbt")
@click.option("--project", "project_dir", type=Directory("project"), default=".",
              help="The dbt project to write into (default: the current directory).")
@click.option("--spec", "spec_dir", type=Directory("spec"), default=None,
              help="The spec: the directory holding assay.yml (default: the one recorded by the last generate).")
@click.option("--force", is_flag=True, help="Overwrite generated files you edited (assay's own files only).")
@json_option("Print what was written, where the tables land and the next command as JSON.")
def generate_dbt_cmd(spec_dir: Optional[Path], project_dir: Path, force: bool, as_json: bool) -> None:
    """Generate models, snapshots, tests and sources into a dbt project; the project remembers the spec."""
    from ..api import generate_dbt_project, target_warnings
    from ..errors import openable

    if not (project_dir / "dbt_project.yml").exists():
        raise ProjectError(f"{shown(project_dir)} has no dbt_project.yml; point --project at a dbt project (or make one with `assay init DIR`).")
    spec = resolve_spec(spec_dir, project_dir)
    with overwriting_edits() if force else contextlib.nullcontext():
        result = generate_dbt_project(spec, project_dir, force=force)
    _refuse(result, project_dir)
    record_spec_dir(project_dir, spec)
    # What may not run on every engine (a DuckDB-only strftime directive), said as `assay validate` says it.
    for d in [] if as_json else target_warnings(spec, "dbt"):
        click.echo(f"{openable(spec, d.file)}:{d.line}: warning: {d.code}: {d.message}", err=True)
    schemas, landing = dbt_landing(project_dir, result.project)
    if as_json:
        _as_json(result, spec, project_dir, "dbt", schemas, landing, _next_dbt(project_dir).split(": ", 1)[1],
                 packages_changed=result.packages_changed)
        return
    _summary(result, spec, result.report.modified)
    if result.packages_changed:
        # docs/quickstart.md: `dbt deps` again when generate says so; the build fails without it
        click.echo("packages.yml: the assay package entry changed; run `dbt deps` before the build")
    click.echo(landing)
    click.echo(_next_dbt(project_dir))


@generate.command("sqlmesh")
@click.option("--project", "project_dir", type=Directory("project"), default=".",
              help="The SQLMesh project to write into (default: the current directory).")
@click.option("--spec", "spec_dir", type=Directory("spec"), default=None,
              help="The spec: the directory holding assay.yml (default: the one recorded by the last generate).")
@click.option(
    "--dialect",
    type=click.Choice(list(DIALECTS)),
    default=DEFAULT_DIALECT,
    show_default=True,
    help="The SQL dialect the generated models are written in (the macros render for the engine that runs them); "
         "what the target cannot realise on it is refused (spark: entities with a reject table; docs/sqlmesh.md).",
)
@click.option("--force", is_flag=True, help="Overwrite generated files you edited (assay's own files only).")
@json_option("Print what was written, where the models land and the next command as JSON.")
def generate_sqlmesh_cmd(spec_dir: Optional[Path], project_dir: Path, dialect: str, force: bool, as_json: bool) -> None:
    """Generate models, audits, external models and the macro hook into a SQLMesh project."""
    from ..api import target_warnings
    from ..api_sqlmesh import CONFIG_STATEMENTS, config_names, statement_meta, generate_sqlmesh_project, is_sqlmesh_project
    from ..errors import openable

    if not is_sqlmesh_project(project_dir):
        raise ProjectError(f"{shown(project_dir)} has no config.yaml or config.py; point --project at a SQLMesh project (make one with `sqlmesh init`).")
    spec = resolve_spec(spec_dir, project_dir)
    upgrading = _mart_was_a_table(project_dir)
    with overwriting_edits() if force else contextlib.nullcontext():
        result = generate_sqlmesh_project(spec, project_dir, dialect=dialect)
    _refuse(result, project_dir)
    record_spec_dir(project_dir, spec)
    if upgrading and not as_json:
        gold = result.project.schema("gold")
        click.echo(f"note: {gold}.mart_data_quality is now a view over one part per entity (decision 0969); the runs "
                   "recorded so far stay in the old table, which the view does not read. Before your next `sqlmesh plan`, "
                   f"note the old table's name (`sqlmesh table_name {gold}.mart_data_quality`), then copy each entity's "
                   "rows into its part after the plan (docs/sqlmesh.md, \"Upgrading a project generated before decision "
                   "0969\")", err=True)
    # What SQLMesh does not run (checks of tables assay only reads), said as `assay validate` says it.
    skipped = target_warnings(spec, "sqlmesh", dialect)
    for d in [] if as_json else skipped:
        click.echo(f"{openable(spec, d.file)}:{d.line}: warning: {d.code}: {d.message}", err=True)
    p = result.project
    for st in [] if as_json else CONFIG_STATEMENTS:
        into, wanted = statement_meta(project_dir, st.macro), st.text(p.schema("meta"))
        if into is not None and into != p.schema("meta"):
            # it would record where the spec no longer reads (an outside tester, session 43)
            click.echo(f"note: the config's {st.stage} records {st.recorded} into `{into}`, but the spec's meta schema is "
                       f"`{p.schema('meta')}`; write \"{wanted}\" there before your next `{st.next_step}`", err=True)
        if not config_names(project_dir, st.macro):
            click.echo(f"note: the config does not record {st.records}; add \"{wanted}\" to its {st.stage} statements, "
                       f"or {st.without}", err=True)
    landing = (f"models land in {p.schema('silver')} and {p.schema('gold')} (SQLMesh's prod environment); "
               f"bronze is read from {p.schema('bronze')}")
    next_step = build_command(project_dir)
    if as_json:
        schemas = {role: p.schema(role) for role in ("silver", "gold", "meta")}
        _as_json(result, spec, project_dir, "sqlmesh", schemas, landing, next_step,
                 skipped_checks=[d.as_dict() for d in skipped])
        return
    _summary(result, spec, result.report.modified)
    click.echo(landing)
    click.echo("next: " + next_step)


def _mart_was_a_table(project_dir: Path) -> bool:
    """Whether the project's mart model is the single table assay generated before decision 0969
    (one INCREMENTAL_UNMANAGED model), which this generation turns into a view over parts."""
    from ..targets.sqlmesh import MODELS_DIR

    path = Path(project_dir) / MODELS_DIR / "mart_data_quality.sql"
    try:
        return "kind INCREMENTAL_UNMANAGED" in path.read_text(encoding="utf-8")
    except OSError:
        return False


COMMANDS = (generate,)
