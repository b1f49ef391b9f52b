"""`assay validate [SPEC_DIR]`: every refusal at once, or a one-line summary."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import SpecError, openable
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
    """Check a spec directory and report every problem at once (exit 1 when there is one)."""
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
        text = json.dumps(payload, indent=2, sort_keys=True)
        if project is None:
            raise SpecError(diags, out=[text], summary="")
        click.echo(text)
        return
    for f, k in loaded.skipped:
        click.echo(f"skipped {openable(spec_dir, f)}: `{k}` documents carry no quality semantics", err=True)
    if project is None:
        raise SpecError(diags, spec_dir=spec_dir, summary=f"{_count(len(diags), 'problem')} found.")
    if not loaded.files:
        click.echo(f"warning: {spec_dir} holds no spec documents (*.yml, *.yaml); pass the folder that holds your spec.", err=True)
    elif not project.entities:
        click.echo(f"warning: {spec_dir} declares no entities, so `assay generate` has nothing to build and refuses it; "
                   "add a `spec_version: 1` document with `entities:`.", err=True)
    s = summary(project)
    click.echo(
        f"ok: {_count(s['entities'], 'entity', 'entities')}, {_count(s['mappings'], 'mapping')}, "
        f"{_count(s['rules'], 'rule')}, {_count(s['checks'], 'check')} (spec {project.fingerprint})"
    )


def _count(n: int, noun: str, plural: str = "") -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
