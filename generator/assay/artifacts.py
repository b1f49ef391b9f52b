"""The one writer: puts generated files into a user's project, and only those.

Every file assay writes is listed in `.assay/manifest.json` with its digest.
A re-generation rewrites exactly those files, removes the ones the spec no
longer produces, and refuses to overwrite a file it does not own. Writing is
skipped for unchanged files, so a re-run leaves the tree byte-identical.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST = ".assay/manifest.json"


@dataclass
class WriteReport:
    """The files one generation wrote, left unchanged, removed, or refused to overwrite (conflicts)."""

    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    edited: list[str] = field(default_factory=list)  # owned files patched in place (packages.yml)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_manifest(project_dir: Path) -> dict:
    path = project_dir / MANIFEST
    if not path.exists():
        return {"files": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def write_project(project_dir: Path, files: dict[str, str], target: str, fingerprint: str) -> WriteReport:
    """Write `files` (relative path -> text) into `project_dir`, owning them in the manifest."""
    project_dir = Path(project_dir)
    report = WriteReport()
    old = read_manifest(project_dir).get("files", {})
    # Every conflict is found before the first write: a refused generation leaves the project
    # exactly as it was, rather than half-written with files the manifest does not own.
    for rel in sorted(files):
        path = project_dir / rel
        if path.exists() and rel not in old and path.read_text(encoding="utf-8", errors="replace") != files[rel]:
            report.conflicts.append(rel)
    if report.conflicts:
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
    mpath = project_dir / MANIFEST
    mpath.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    if not mpath.exists() or mpath.read_text(encoding="utf-8") != text:
        mpath.write_text(text, encoding="utf-8")
    return report


def _prune_empty(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def ensure_package_entry(project_dir: Path, local_path: str) -> bool:
    """Add `- local: <local_path>` to the project's packages.yml, keeping the user's other entries.

    The file is the user's; assay touches one line of it and never rewrites the rest.
    Returns True when the file changed.
    """
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
