"""`assay validate [SPEC_DIR]`: every refusal at once, or a one-line summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..ir.resolve import compile_spec


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
@click.argument("spec_dir", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON objects.")
def validate_cmd(spec_dir: Path, as_json: bool) -> None:
    """Check a spec directory and report every problem at once."""
    if not spec_dir.is_dir():
        raise click.UsageError(f"{spec_dir} is not a directory; pass the folder that holds your spec YAML files.")
    project, diags, loaded = compile_spec(spec_dir)
    skipped = [{"file": f, "kind": k} for f, k in loaded.skipped]
    if as_json:
        payload = {
            "ok": project is not None,
            "problems": [d.as_dict() for d in diags],
            "skipped": skipped,
            "summary": summary(project) if project is not None else None,
        }
        click.echo(json.dumps(payload, indent=2, sort_keys=True))
        sys.exit(0 if project is not None else 1)
    for f, k in loaded.skipped:
        click.echo(f"skipped {_openable(spec_dir, f)}: `{k}` documents carry no quality semantics", err=True)
    if project is None:
        for d in diags:
            click.echo(f"{_openable(spec_dir, d.file)}:{d.line}: {d.code}: {d.message}")
        click.echo(f"{_count(len(diags), 'problem')} found.", err=True)
        sys.exit(1)
    if not loaded.files:
        click.echo(f"warning: {spec_dir} holds no spec documents (*.yml, *.yaml); pass the folder that holds your spec.", err=True)
    s = summary(project)
    click.echo(
        f"ok: {_count(s['entities'], 'entity', 'entities')}, {_count(s['mappings'], 'mapping')}, "
        f"{_count(s['rules'], 'rule')}, {_count(s['checks'], 'check')} (spec {project.fingerprint})"
    )


def _openable(spec_dir: Path, file: str) -> str:
    """A problem's file as the user can open it from where they ran the command.

    Diagnostics name files relative to the project root (so the IR never depends on
    where the project sits); on a terminal they are joined to the directory given.
    """
    return file if spec_dir == Path(".") else (spec_dir / file).as_posix()


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
