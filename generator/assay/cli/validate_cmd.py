"""`assay validate [--spec DIR] [--project DIR] [--target dbt|sqlmesh [--dialect D]] [--json]`: every refusal at once,
or a one-line summary.

The spec is checked for one target: what that target cannot realise (validate/targets.py) is
refused here, by file and line, exactly as `assay generate` for that target would refuse it, and
what it would skip is a warning (exit 0). For SQLMesh, `--dialect` adds what the target cannot
realise on that dialect, as `assay generate sqlmesh --dialect` does (default: generate's default).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import click

from ..api_sqlmesh import DEFAULT_DIALECT
from ..artifacts import read_manifest
from ..errors import AssayUsageError, Diagnostic, ProjectError, SpecError, openable
from ..ir.resolve import resolve
from ..spec.loader import load_spec
from ..targets.sqlmesh import DIALECTS
from ..validate import validate
from ..validate.targets import TARGETS
from .common import Directory, json_option, plural, project_option, resolve_spec, spec_option


def default_target(project_dir: Path) -> str:
    """The target `assay generate` recorded for the project, else dbt."""
    recorded = read_manifest(project_dir).get("target")
    return recorded if recorded in TARGETS else "dbt"


def summary(project) -> dict:
    """Counts shown by a clean `assay validate`."""
    return {
        "entities": len(project.entities),
        "mappings": sum(len(e.mappings) for e in project.entities),
        "rules": sum(len(e.rules) for e in project.entities),
        "checks": sum(len(e.declared_checks) + len(e.sql_checks) for e in project.entities)
        + sum(len(t.declared_checks) for t in project.tables)
        + len(project.sql_checks),
    }


@click.command("validate")
# The spec used to be positional; kept so that scripts written for it keep working.
@click.argument("spec_arg", metavar="[SPEC_DIR]", required=False, type=Directory("spec", exists=False))
@spec_option()
@project_option("The project whose recorded spec to check (default: the current directory).")
@click.option("--target", "target", type=click.Choice(list(TARGETS)), default=None,
              help="The target the spec is checked for: what it cannot realise is refused (default: the target "
                   "`assay generate` recorded for --project, else dbt).")
@click.option("--dialect", "dialect", type=click.Choice(list(DIALECTS)), default=None,
              help=f"With --target sqlmesh: the dialect `assay generate sqlmesh --dialect` would write; what the "
                   f"target cannot realise on it is refused too (default: {DEFAULT_DIALECT}).")
@json_option("Print the result as JSON objects.")
def validate_cmd(spec_arg: Optional[Path], spec_dir: Optional[Path], project_dir: Path, target: Optional[str],
                 dialect: Optional[str], as_json: bool) -> None:
    """Check a spec for a target and report every problem at once (exit 1 when there is one).

    The spec is --spec (SPEC_DIR, positional, is the same and kept for old scripts), else the
    one `assay generate` recorded for --project, else the project itself when it holds assay.yml.
    """
    if spec_arg is not None and spec_dir is not None:
        raise AssayUsageError("pass the spec once: --spec DIR (a positional SPEC_DIR means the same).")
    if spec_arg is not None and not spec_arg.is_dir():
        raise click.UsageError(f"{spec_arg} is not a directory; pass --spec with the folder that holds assay.yml (or your spec YAML files).")
    spec_dir = resolve_spec(spec_arg if spec_arg is not None else spec_dir, project_dir)
    target = target or default_target(project_dir)
    if dialect is not None and target != "sqlmesh":
        raise AssayUsageError(f"--dialect is the SQL dialect of the SQLMesh models; pass it with --target sqlmesh "
                              f"(for {target}, the engine is the one your profile connects to).")
    label = target if dialect is None else f"{target} --dialect {dialect}"
    loaded = load_spec(spec_dir)
    if loaded.holds_nothing:
        # Nothing was checked, so nothing can be called valid: a wrong folder must not pass CI.
        said = (f"{spec_dir} holds no spec documents (*.yml, *.yaml), so there is nothing to validate; "
                "pass --spec with the folder that holds your assay.yml and spec files.")
        if as_json:  # the same result, in the shape a script reads (session 36: plain text on stderr)
            empty = Diagnostic(str(spec_dir), 0, said, "SPEC_NO_DOCUMENTS")
            payload = {"ok": False, "target": target, "problems": [empty.as_dict()], "warnings": [], "skipped": [],
                       "summary": None}
            raise SpecError([empty], out=[json.dumps(payload, indent=2, sort_keys=True)], summary="")
        raise ProjectError(said)
    validated = validate(loaded, target, (dialect or DEFAULT_DIALECT) if target == "sqlmesh" else None)
    project, diags = resolve(loaded, validated)
    # what the target skips without changing any row (advisory checks): reported, not refused,
    # and never counted among the problems, also when there are problems beside it
    warnings = [d for d in (validated.diagnostics if project is not None else diags) if d.severity != "error"]
    diags = [d for d in diags if d.severity == "error"]
    skipped = [{"file": f, "kind": k} for f, k in loaded.skipped]
    if as_json:
        payload = {
            "ok": project is not None,
            "target": target,
            "problems": [d.as_dict() for d in diags],
            "warnings": [d.as_dict() for d in warnings],
            "skipped": skipped,
            "summary": summary(project) if project is not None else None,
        }
        text = json.dumps(payload, indent=2, sort_keys=True)
        if project is None:
            raise SpecError(diags, out=[text], summary="")
        click.echo(text)
        return
    for f, k in loaded.skipped:
        click.echo(f"skipped {openable(spec_dir, f)}: `{k}` documents carry no quality semantics", err=True)
    for d in warnings:
        click.echo(f"{openable(spec_dir, d.file)}:{d.line}: warning: {d.code}: {d.message}", err=True)
    if project is None:
        raise SpecError(diags, spec_dir=spec_dir, summary=f"{plural(len(diags), 'problem')} found.")
    if not project.entities:
        click.echo(f"warning: {spec_dir} declares no entities, so `assay generate` has nothing to build and refuses it; "
                   "add a `spec_version: 1` document with `entities:`.", err=True)
    s = summary(project)
    click.echo(
        f"ok: {plural(s['entities'], 'entity', 'entities')}, {plural(s['mappings'], 'mapping')}, "
        f"{plural(s['rules'], 'rule')}, {plural(s['checks'], 'check')} (spec {project.fingerprint}, for {label})"
    )
