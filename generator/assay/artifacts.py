"""The one writer: puts generated files into a user's project, and only those.

Every file assay writes is listed in `.assay/manifest.json` with its digest.
A re-generation rewrites exactly those files, removes the ones the spec no
longer produces, and refuses to overwrite a file it does not own, or one it
owns that the user edited since (its digest no longer matches) unless forced.
Writing is skipped for unchanged files, so a re-run leaves the tree byte-identical.
The manifest also records the spec directory `assay generate` read (relative to
the project), so every later command finds the spec without `--spec`, and the spec's schemas by
role, so the commands that read check results know where the build wrote them even when the
spec is not at hand (decision 0913).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

MANIFEST = ".assay/manifest.json"

# Set by `overwriting_edits()` (the CLI's `--force`): the SQLMesh API writes through
# write_project without a force parameter of its own, so the choice travels this way.
_FORCE = contextvars.ContextVar("assay_overwrite_edits", default=False)


@dataclass
class WriteReport:
    """The files one generation wrote, left unchanged, removed, or refused to overwrite (conflicts)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)  # owned files patched in place (packages.yml)
    # Owned files changed by hand since assay wrote them, which this generation would overwrite or
    # remove; nothing is written while there are any, unless forced.
    modified: list[str] = field(default_factory=list)
    # Paths the project holds as a symbolic link (the file or a directory above it): writing there
    # would write wherever the link points (decision 1157); nothing is written while there are any.
    links: list[str] = field(default_factory=list)
    refused: bool = False  # True when nothing was written because of conflicts, modified files or links


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_manifest(project_dir: Path) -> dict:
    """The project's `.assay/manifest.json`, or an empty one when assay never generated into it."""
    path = Path(project_dir) / MANIFEST
    if not path.exists():
        return {"files": {}}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        # A manifest broken by hand owns nothing: every generated file then counts as the
        # user's, so the next generation refuses instead of overwriting blindly.
        return {"files": {}}
    return data if isinstance(data, dict) else {"files": {}}


@contextlib.contextmanager
def overwriting_edits() -> Iterator[None]:
    """Within the block, generations overwrite (or remove) owned files the user edited (`--force`)."""
    token = _FORCE.set(True)
    try:
        yield
    finally:
        _FORCE.reset(token)


def linked_part(project_dir: Path, rel: str) -> Optional[str]:
    """The part of `rel` (relative to the project) that is a symbolic link, or None. A project is
    a directory others commit to (the spec's author, in `assay init`'s layout): a link committed
    where assay writes a file sent the write anywhere the operator can write, a Python `.pth` file
    among them (an outside tester, session 44)."""
    here = Path(project_dir)
    for part in Path(rel).parts:
        here = here / part
        if here.is_symlink():
            return here.relative_to(project_dir).as_posix()
    return None


def owned_path(project_dir: Path, rel) -> Optional[Path]:
    """The project path a manifest entry names, or None when it names none: a manifest is a file
    in the project, which anyone who commits to it can edit, so an entry outside the project
    (`../x`, `/x`), through a link, or not a plain relative path is never assay's to remove."""
    if not isinstance(rel, str) or not rel or "\\" in rel or "\x00" in rel:
        return None
    parts = Path(rel).parts
    if Path(rel).is_absolute() or any(p in ("..", ".", "") for p in parts) or rel.startswith("/"):
        return None
    if linked_part(project_dir, rel) is not None:
        return None
    return Path(project_dir) / rel


def _current_digest(path: Path) -> Optional[str]:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def write_project(project_dir: Path, files: dict[str, str], target: str, fingerprint: str,
                  force: Optional[bool] = None, schemas: Optional[dict[str, str]] = None) -> WriteReport:
    """Write `files` (relative path -> text) into `project_dir`, owning them in the manifest.

    Refuses (writes nothing, returns the report with `conflicts` or `modified`) when a file exists
    that assay does not own, or when an owned file was edited since assay wrote it and this
    generation would change or remove it; `force` (default: inside `overwriting_edits()`)
    overwrites the edited ones. Files assay does not own are never overwritten. `schemas`
    ({role: schema} as the spec names them) is recorded beside the files.
    """
    project_dir = Path(project_dir)
    force = _FORCE.get() if force is None else force
    report = WriteReport()
    manifest_before = read_manifest(project_dir)
    old = {rel: digest for rel, digest in (manifest_before.get("files") or {}).items()
           if owned_path(project_dir, rel) is not None} if isinstance(manifest_before.get("files"), dict) else {}
    report.links = sorted({link for rel in [*files, MANIFEST] if (link := linked_part(project_dir, rel)) is not None})
    if report.links:
        report.refused = True
        return report
    # Every conflict is found before the first write: a refused generation leaves the project
    # exactly as it was, rather than half-written with files the manifest does not own.
    for rel in sorted(files):
        path = project_dir / rel
        if path.exists() and rel not in old and path.read_text(encoding="utf-8", errors="replace") != files[rel]:
            report.conflicts.append(rel)
    for rel in sorted(old):
        path = project_dir / rel
        now = _current_digest(path) if path.is_file() else None
        if now is None or now == old[rel]:
            continue  # untouched since assay wrote it (or gone): safe to rewrite
        if rel in files and _digest(files[rel]) == now:
            continue  # the edit is exactly what this generation writes
        report.modified.append(rel)
    if report.conflicts or (report.modified and not force):
        report.refused = True
        return report
    for rel in sorted(files):
        path = project_dir / rel
        text = files[rel]
        if path.exists() and path.read_text(encoding="utf-8", errors="replace") == text:
            report.unchanged.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        report.written.append(rel)
    for rel in sorted(set(old) - set(files)):
        path = project_dir / rel
        if path.exists():
            path.unlink()
            report.removed.append(rel)
            _prune_empty(path.parent, project_dir)
    manifest = {
        "generator": "assay",
        "target": target,
        "spec": fingerprint,
        "files": {rel: _digest(files[rel]) for rel in sorted(files)},
    }
    if schemas:
        manifest["schemas"] = dict(sorted(schemas.items()))
    if isinstance(manifest_before.get("spec_dir"), str):
        # Recorded by the CLI (record_spec_dir); a generation through the API keeps it.
        manifest["spec_dir"] = manifest_before["spec_dir"]
    _write_manifest(project_dir, manifest)
    return report


def _refuse_link(project_dir: Path, rel: str) -> None:
    link = linked_part(project_dir, rel)
    if link is not None:
        from .errors import ProjectError

        raise ProjectError(f"{link} in {project_dir} is a symbolic link; assay writes only regular files inside the "
                           "project, never through a link (it would write wherever the link points): remove it and run "
                           "the command again.")


def _write_manifest(project_dir: Path, manifest: dict) -> None:
    _refuse_link(project_dir, MANIFEST)
    mpath = Path(project_dir) / MANIFEST
    mpath.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    if not mpath.exists() or mpath.read_text(encoding="utf-8") != text:
        mpath.write_text(text, encoding="utf-8")


def record_spec_dir(project_dir: Path, spec_dir: Path) -> str:
    """Remember in the manifest where the project's spec is, relative to the project; returns it.

    Relative, so the project and its spec can move together (or be cloned elsewhere) and every
    command still finds the spec without `--spec`.
    """
    project_dir = Path(project_dir)
    rel = Path(os.path.relpath(Path(spec_dir).resolve(), project_dir.resolve())).as_posix()
    manifest = read_manifest(project_dir)
    if manifest.get("spec_dir") != rel:
        manifest["spec_dir"] = rel
        _write_manifest(project_dir, manifest)
    return rel


def recorded_spec_dir(project_dir: Path) -> Optional[Path]:
    """The spec directory `assay generate` recorded for the project (joined to it), or None."""
    rel = read_manifest(Path(project_dir)).get("spec_dir")
    if not isinstance(rel, str) or not rel:
        return None
    return Path(os.path.normpath(Path(project_dir) / rel))


def recorded_schemas(project_dir: Path) -> Optional[dict[str, str]]:
    """{role: schema} as the spec `assay generate` last wrote into the project named them, or None
    when it recorded none (a project generated before the record, or never)."""
    found = read_manifest(Path(project_dir)).get("schemas")
    if not isinstance(found, dict):
        return None
    out = {role: name for role, name in found.items() if isinstance(role, str) and isinstance(name, str) and name}
    return out or None


def _prune_empty(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def ensure_package_entry(project_dir: Path, local_path: str) -> bool:
    """Add `- local: <local_path>` to the project's packages.yml, keeping the user's other entries.

    The file is the user's; assay touches one line of it and never rewrites the rest.
    Returns True when the file changed.
    """
    _refuse_link(project_dir, "packages.yml")
    path = Path(project_dir) / "packages.yml"
    entry = f"  - local: {local_path}\n"
    if not path.exists():
        path.write_text("packages:\n" + entry, encoding="utf-8")
        return True
    text = path.read_text(encoding="utf-8")
    if f"local: {local_path}" in text:
        return False
    if "packages:" not in text:
        text = text.rstrip("\n") + ("\n" if text.strip() else "") + "packages:\n"
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == "packages:" or line.startswith("packages:"):
            if line.strip() == "packages: []":
                lines[i] = "packages:\n"
            lines.insert(i + 1, entry)
            break
    path.write_text("".join(lines), encoding="utf-8")
    return True
