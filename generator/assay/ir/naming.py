"""Generated rule names: part of the interface, since dashboards read them.

`<col>_<rule>` for field rules; `range`/`length` with one bound get `_min` or
`_max`; `<relationship>_referential`; an expression keeps its own name.
Names fold to `[a-z0-9_]`; collisions get `_2`, `_3` in declaration order: the entity's
mappings by mapping name, each in document order (decision 0959).
"""

from __future__ import annotations

import re


def fold(name: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


def base_name(kind: str, column: str | None, params: dict, relationship: str | None = None) -> str:
    if kind == "referential":
        return fold(f"{relationship}_referential")
    suffix = kind
    if kind in ("range", "length"):
        has_min, has_max = params.get("min") is not None, params.get("max") is not None
        if has_min and not has_max:
            suffix = f"{kind}_min"
        elif has_max and not has_min:
            suffix = f"{kind}_max"
    return fold(f"{column}_{suffix}")


class NameAllocator:
    """Hands out unique generated names in declaration order.

    Authored names are not reserved: a generated name must not depend on what
    someone chose to call an expression, so a clash is reported instead of
    silently renaming the generated rule.
    """

    def __init__(self, authored=()):
        self.authored = set(authored)
        self.used: set[str] = set()

    def take(self, base: str) -> tuple[str, bool]:
        """(name, clashes_with_an_authored_name)."""
        name, n = base, 1
        while name in self.used:
            n += 1
            name = f"{base}_{n}"
        self.used.add(name)
        return name, name in self.authored
