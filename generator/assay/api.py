"""The core API the CLI and tests call; it never prints."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .artifacts import WriteReport, ensure_package_entry, write_project
from .errors import AssayError, SpecError
from .ir.model import Project
from .ir.resolve import compile_spec


@dataclass
class GenerateResult:
    """What `generate_dbt_project` did: the compiled project, the files written, packages.yml changed."""

    project: Project
    report: WriteReport
    packages_changed: bool = False


def load_project(spec_dir: Path | str, target: Optional[str] = None, dialect: Optional[str] = None) -> Project:
    """Compile a spec directory to the IR or raise SpecError with every refusal.

    With a `target`, what that target cannot realise is refused too (validate/targets.py), and
    with a `dialect` (SQLMesh's `--dialect`), what it cannot realise on that dialect.
    """
    project, diags, _loaded = compile_spec(Path(spec_dir), target, dialect)
    if project is None:
        raise SpecError(diags, spec_dir=Path(spec_dir))
    return project


def target_warnings(spec_dir: Path | str, target: str, dialect: Optional[str] = None) -> list:
    """What `target` skips of a valid spec without changing any row (on SQLMesh: checks of tables
    assay only reads), as warning Diagnostics: generate says so, never silently."""
    from .spec.loader import load_spec
    from .validate import validate

    return [d for d in validate(load_spec(Path(spec_dir)), target, dialect).diagnostics if d.severity != "error"]


def require_entities(project: Project, spec_dir: Path | str) -> None:
    """Refuse to generate from a spec that declares no entity.

    Such a spec is valid (a new project, a directory with only `tables_version` documents) but
    every generated node hangs off an entity, and an empty project would compile to broken SQL
    (`mart_data_quality` with no entity to read). Called before anything is written or removed.
    """
    if not project.entities:
        raise AssayError(
            f"the spec in {spec_dir} declares no entities, so there is nothing to generate and nothing was written. "
            "Add a `spec_version: 1` document with `entities:` (docs/spec.md), or point --spec at the directory "
            "that holds your assay.yml (`assay validate --spec DIR` shows what it finds)."
        )


def dbt_files(project: Project) -> dict[str, str]:
    """Everything assay owns in a dbt project: generated nodes plus the dbt package copy."""
    from .targets.dbt import PACKAGE_DIR, generate_dbt
    from .targets.dbt.package import package_files

    files = generate_dbt(project)
    files.update(package_files(PACKAGE_DIR))
    return dict(sorted(files.items()))


def generate_dbt_project(spec_dir: Path | str, project_dir: Path | str, project: Optional[Project] = None,
                         force: Optional[bool] = None) -> GenerateResult:
    """Write the dbt nodes of a spec into an existing dbt project.

    Nothing is written when a file assay would write is not assay's (`report.conflicts`) or is
    assay's but was edited by hand (`report.modified`); `force=True` overwrites the edited ones.
    """
    from .errors import ProjectError
    from .targets.dbt import PACKAGE_DIR
    from .targets.dbt.naming import node_clashes

    # validated for the dbt target: what it cannot build (a referential cycle) is refused here as
    # `assay validate --target dbt` refuses it, not written for dbt to fail on (decision 0954)
    project = project or load_project(spec_dir, target="dbt")
    require_entities(project, spec_dir)
    project_dir = Path(project_dir)
    files = dbt_files(project)
    clashes = node_clashes(project_dir, files)
    if clashes:
        raise ProjectError(
            f"{len(clashes)} model or snapshot file{'s' if len(clashes) > 1 else ''} of your own in {project_dir} "
            f"{'have' if len(clashes) > 1 else 'has'} the name of one assay generates, and dbt refuses two nodes of one "
            "name; nothing was written. Rename yours (or the entity in the spec) and run `assay generate` again.",
            details=[f"{mine}: named like the generated {theirs}" for mine, theirs in clashes])
    report = write_project(project_dir, files, "dbt", project.fingerprint, force=force,
                           schemas=dict(project.schemas))
    changed = False
    if not report.refused:
        changed = ensure_package_entry(project_dir, PACKAGE_DIR)
    return GenerateResult(project, report, changed)
