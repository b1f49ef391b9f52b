"""Which files of a spec directory are spec documents, and the names they are reported by."""

from __future__ import annotations

import os
from pathlib import Path

# Folders of a dbt or SQLMesh project that hold no spec documents, skipped when the spec
# lives at the root of such a project.
NOT_SPEC_DIRS = {
    "target", "dbt_packages", "logs", "models", "snapshots", "macros", "seeds", "tests", "analyses",
    "assay_packages", "audits", "external_models", "bronze",
}
SPEC_SUFFIXES = (".yml", ".yaml")
# The files of a dbt or SQLMesh project in the folder that makes it one (`dbt_project.yml`, or
# SQLMesh's config beside a `models` folder): with the default `specs: .` and the spec at such a
# project's root, they were refused as spec documents "with no version key" (session 41).
TOOL_FILES = (
    ("dbt_project.yml", {"dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml", "selectors.yml",
                         "package-lock.yml"}),
    ("models", {"config.yaml", "config.yml", "external_models.yaml", "external_models.yml"}),
)


def is_dir(path: Path) -> bool:
    """Whether `path` is a directory; an unusable name (too long, ...) is none either, not a crash."""
    try:
        return path.is_dir()
    except OSError:
        return False


def is_under(path: Path, directory: Path) -> bool:
    """Whether `path` is `directory` or inside it, after following links."""
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


def spec_yaml_files(spec_root: Path, root: Path, skip: tuple[str, ...], checks_dir: Path) -> tuple[list, list]:
    """(path, name relative to `root`) of every YAML document under `spec_root`, sorted, and
    (name, reason) of each folder that cannot be listed: its documents would be missed silently.

    A folder that is a symbolic link is read like any other (a shared folder linked into several
    projects), once: a link back to a folder already read is not entered again. Files are named by
    the path the user sees in the folder, never by where a link points, so that names do not depend
    on where the project sits. `.YAML` and `.Yml` count too: a glob matches case-insensitively on
    macOS and Windows, and which files are read must not depend on the machine (decision 0977).
    """
    prefix = Path(os.path.relpath(spec_root.resolve(), root.resolve()))
    found: list[tuple[Path, str]] = []
    unreadable: list[tuple[str, str]] = []

    def refused(exc: OSError) -> None:
        name = (prefix / Path(exc.filename).relative_to(spec_root)).as_posix()
        unreadable.append((name, exc.strerror or str(exc)))

    entered: set = set()
    for folder, subfolders, files in os.walk(spec_root, onerror=refused, followlinks=True):
        real = os.path.realpath(folder)
        if real in entered:
            subfolders[:] = []
            continue
        entered.add(real)
        subfolders[:] = [d for d in subfolders if not d.startswith(".") and d not in NOT_SPEC_DIRS]
        inside = Path(folder).relative_to(spec_root)
        tools = set().union(*(names for marker, names in TOOL_FILES if (Path(folder) / marker).exists()))
        for name in files:
            path = Path(folder) / name
            if Path(name).suffix.lower() in SPEC_SUFFIXES and name not in skip and name not in tools \
                    and not is_under(path, checks_dir):
                found.append((path, (prefix / inside / name).as_posix()))
    return sorted(found), sorted(unreadable)
