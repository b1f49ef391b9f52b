"""Diagnostics: every refusal assay reports, with the place it was found.

A bad spec is answered with all of its problems at once. Stages never raise on
a user's mistake; they return :class:`Diagnostic` objects that the CLI prints.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem found in a spec: where it is, what is wrong, what to write instead."""

    file: str
    line: int
    message: str
    code: str = "SPEC_INVALID"
    severity: str = field(default="error", compare=False)

    def render(self) -> str:
        """`file:line: CODE: message`, the form `assay validate` prints."""
        return f"{self.file}:{self.line}: {self.code}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }


class SpecError(Exception):
    """Raised by the API entry points when a spec has refusals; carries all of them."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = sorted(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))


class AssayUsageError(Exception):
    """A command was called in a way that cannot work (missing directory, unknown entity)."""

    exit_code = 2
