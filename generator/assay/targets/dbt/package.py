"""The copy of the `assay` dbt package shipped inside the Python distribution.

Generated projects install it with a `local:` entry in packages.yml, so
`dbt deps` works offline and the package is always the version the
generator was built with.
"""

from __future__ import annotations

from pathlib import Path

SUFFIXES = (".sql", ".yml", ".md")


def package_root() -> Path:
    here = Path(__file__).resolve().parents[2]  # generator/assay
    return here / "_dbt_package"


def package_files(prefix: str) -> dict[str, str]:
    """Every file of the dbt package, as `<prefix>/<relative path>` -> text, sorted."""
    root = package_root()
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in SUFFIXES and "integration_tests" not in path.parts:
            out[f"{prefix}/{path.relative_to(root).as_posix()}"] = path.read_text(encoding="utf-8")
    return out
