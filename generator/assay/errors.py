"""Diagnostics: every refusal assay reports, with the place it was found.

A bad spec is answered with all of its problems at once. Stages never raise on
a user's mistake; they return :class:`Diagnostic` objects that the CLI prints.
The API entry points raise :class:`AssayError` subclasses, each carrying its exit
code; the CLI entry point is the one place that prints them and exits.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence


# Characters that end a line somewhere (terminals, YAML, SQL comments): written as escapes.
_LINE_BREAKS = {ch: f"\\u{ord(ch):04x}" for ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(text: str) -> str:
    """`text` with every line break written as `\\uXXXX`."""
    return text.translate(str.maketrans(_LINE_BREAKS))


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem found in a spec: where it is, what is wrong, what to write instead."""

    file: str
    line: int
    message: str
    code: str = "SPEC_INVALID"
    severity: str = field(default="error", compare=False)

    def render(self) -> str:
        """`file:line: CODE: message`, the form `assay validate` prints, always one line: a name
        quoted in the message (or a file name) may hold a newline, which must not start what
        reads as another diagnostic."""
        return one_line(f"{self.file}:{self.line}: {self.code}: {self.message}")

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
        }


# The exit codes of every `assay` command (README, "Exit codes"). Scripts and CI branch on them,
# so they are part of the interface.
EXIT_OK = 0
EXIT_PROBLEM = 1  # the spec, the project or the warehouse needs fixing; the message says how
EXIT_CHECKS_FAILED = 2  # the command ran and checks did not pass
EXIT_USAGE = 3  # the command line itself is wrong


class AssayError(Exception):
    """Base of every error a user can cause: what to print and the exit code to end with.

    Raised anywhere below the CLI and handled once, in the entry point (`assay.cli.main`),
    which prints `out` on stdout (machine-readable lines such as diagnostics), then
    `details` and `message` on stderr, and exits with `exit_code`; never a traceback.
    `message` says what went wrong and what to do about it.
    """

    exit_code = EXIT_PROBLEM
    label = "Error: "  # printed before `message`, as Click prints its own errors

    def __init__(self, message: str = "", *, details: Sequence[str] = (), out: Sequence[str] = ()):
        self.message = message
        self.details = list(details)
        self.out = list(out)
        super().__init__(message)


class SpecError(AssayError):
    """The spec has refusals; carries all of them (exit 1).

    `spec_dir`, when given, is joined to each diagnostic's file so that the printed path opens
    from where the command ran (diagnostics name files relative to the project root).
    """

    def __init__(self, diagnostics: list[Diagnostic], *, spec_dir: Optional[Path] = None,
                 summary: Optional[str] = None, out: Optional[Sequence[str]] = None):
        self.diagnostics = sorted(diagnostics)
        self.spec_dir = spec_dir
        # a warning beside the refusals is shown as one (as `assay validate` shows it), not counted
        n = sum(1 for d in self.diagnostics if getattr(d, "severity", "error") == "error") or len(self.diagnostics)
        summary = summary if summary is not None else (
            f"{n} {'problem' if n == 1 else 'problems'} found in the spec; nothing was changed. "
            "Fix each line above (file:line says where) and run the command again."
        )
        lines = [self.render(d) for d in self.diagnostics] if out is None else out
        super().__init__(summary, out=lines)
        self.label = ""  # the summary follows the problems it counts

    def render(self, d: Diagnostic) -> str:
        """One diagnostic as `file:line: CODE: message`, its file openable from the current directory."""
        warning = "warning: " if getattr(d, "severity", "error") == "warning" else ""
        return one_line(f"{openable(self.spec_dir, d.file)}:{d.line}: {warning}{d.code}: {d.message}")

    def __str__(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


class ProjectError(AssayError):
    """The dbt or SQLMesh project (or a directory given for one) cannot be used as it is (exit 1)."""


class WarehouseError(AssayError):
    """The warehouse could not be reached or read; the message names the profile and the cause (exit 1)."""


class ChecksFailed(AssayError):
    """The command ran and checks did not pass: recorded results, or a build's blocking checks (exit 2)."""

    exit_code = EXIT_CHECKS_FAILED
    label = ""  # an outcome, not an error in the command


class AssayUsageError(AssayError):
    """A command was called in a way that cannot work (an unknown entity, a bad combination) (exit 3)."""

    exit_code = EXIT_USAGE


def openable(spec_dir: Optional[Path], file: str) -> str:
    """A diagnostic's file as the user can open it from where they ran the command.

    Diagnostics name files relative to the project root (so the IR never depends on
    where the project sits); on a terminal they are joined to the directory given.
    """
    if spec_dir is None or Path(spec_dir) == Path("."):
        return file
    return (Path(spec_dir) / file).as_posix()
