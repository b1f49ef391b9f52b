"""What every `assay` command shares: the `--project`, `--spec` and `--json` options, how the spec
directory is found, plurals, and the progress display of the long commands.

The CLI contract (DESIGN.md section 5): every command that needs a project takes `--project`
(default: the current directory) and finds its spec through what `assay generate` recorded in the
project's `.assay/manifest.json`; `--spec` overrides, and the spec directory is always the one
holding `assay.yml`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Callable, Optional, TextIO

import click

from ..artifacts import MANIFEST, recorded_spec_dir
from ..errors import EXIT_PROBLEM, EXIT_USAGE, AssayError, AssayUsageError, ProjectError

SETTINGS = "assay.yml"
DBT_PROJECT = "dbt_project.yml"
SQLMESH_CONFIGS = ("config.yaml", "config.yml", "config.py")
PROJECT_HELP = ("The dbt project whose profile, or the SQLMesh project whose gateway, names the warehouse "
                "(default: the current directory).")


class Directory(click.Path):
    """An existing directory (a spec or a project); a file given instead is refused with the
    directory to pass (for a spec, the one holding assay.yml), not only click's "is a file"."""

    def __init__(self, kind: str, exists: bool = True) -> None:
        super().__init__(file_okay=False, exists=exists, path_type=Path)
        self.kind = kind

    def convert(self, value, param, ctx):  # noqa: ANN001 - click's signature
        given = Path(value)
        if given.is_file():
            holder = _enclosing_settings(given) if self.kind == "spec" else None
            if holder is not None and not given.is_absolute():
                holder = Path(os.path.relpath(holder))  # said the way the path was given
            where = shown(holder if holder is not None else given.parent)
            what = f"a spec is the directory that holds {SETTINGS}" if self.kind == "spec" else "a project is a directory"
            self.fail(f"{shown(given)} is a file; {what}: pass {where}", param, ctx)
        return super().convert(value, param, ctx)


def project_option(help_text: str = "The dbt project (default: the current directory).") -> Callable:
    """`--project DIR`, an existing directory, default the current directory."""
    return click.option("--project", "project_dir", type=Directory("project"),
                        default=".", show_default=False, help=help_text)


def spec_option(help_text: Optional[str] = None) -> Callable:
    """`--spec DIR`, default the spec directory `assay generate` recorded for the project."""
    return click.option(
        "--spec", "spec_dir", type=Directory("spec"), default=None,
        help=help_text or ("The spec: the directory holding assay.yml (default: the one `assay generate` "
                           "recorded for the project, else the project itself or its spec/ folder)."),
    )


def json_option(help_text: str = "Print the result as JSON.") -> Callable:
    """`--json`: machine-readable output on stdout, also when the command refuses: a refusal (exit 1
    or 3) prints `{"ok": false, "exit_code", "error", "details", "problems"}` there, the message
    staying on stderr, so a script never parses a plain `file:line:` line as JSON (an outside
    tester, session 41). A command that printed its own JSON keeps it."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def run(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except AssayError as exc:
                if kwargs.get("as_json") and exc.exit_code in (EXIT_PROBLEM, EXIT_USAGE) and not _is_json(exc.out):
                    exc.out = [json.dumps(_refusal(exc), indent=2, sort_keys=True)]
                raise

        return click.option("--json", "as_json", is_flag=True, help=help_text)(run)

    return decorate


def _is_json(lines) -> bool:
    return bool(lines) and str(lines[0]).lstrip().startswith(("{", "["))


def _refusal(exc: AssayError) -> dict:
    problems = [d.as_dict() for d in getattr(exc, "diagnostics", ())]
    errors = [p for p in problems if p["severity"] == "error"]
    return {"ok": False, "exit_code": exc.exit_code, "error": exc.message or None, "details": list(exc.details),
            "problems": errors, "warnings": [p for p in problems if p["severity"] != "error"]}


def plural(n: int, noun: str, many: Optional[str] = None) -> str:
    """`1 row`, `2 rows`, `1 entity`, `3 entities` (pass `many` when adding an s is wrong)."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"


def one_line(text: str) -> str:
    """`text` on one line: an engine's message recorded as a check's detail or an event's why may
    run over several lines, and the text outputs print one line per check or event."""
    return re.sub(r"\s*\n\s*", " ", text)


def shown(path: Path) -> str:
    """A path as messages print it: as given, without `..` detours, POSIX separators."""
    return Path(os.path.normpath(path)).as_posix()


def _enclosing_settings(directory: Path) -> Optional[Path]:
    """The nearest parent directory of `directory` that holds assay.yml, or None."""
    here = directory.resolve()
    for parent in here.parents:
        if (parent / SETTINGS).is_file():
            return parent
    return None


def check_spec_dir(spec_dir: Path, *, given: bool, argument: str = "--spec") -> Path:
    """`spec_dir` if it can be a spec directory; a usage error saying which directory to pass otherwise.

    A spec is the directory holding assay.yml. A directory without one is a spec with default
    settings, unless it sits inside a directory that has one (then the settings, the schemas
    and the other spec folders would be silently ignored) or it is a dbt or SQLMesh project's
    root (whose own YAML files are no spec documents). `argument` names how the user gave it
    (`--spec`, or `OLD_SPEC` for `assay plan`'s earlier spec, which must be a spec of its own).
    """
    spec_dir = Path(os.path.normpath(spec_dir))
    if (spec_dir / SETTINGS).is_file():
        return spec_dir
    how = argument if given else "the spec directory"
    outer = _enclosing_settings(spec_dir)
    if outer is not None:
        rel = os.path.relpath(outer, Path.cwd())
        inside = (f"{shown(spec_dir)} is inside the spec in {shown(Path(rel))} (its {SETTINGS} sets the schemas and "
                  f"the spec folders, which would be ignored)")
        if argument != "--spec":
            # the earlier spec is a whole spec of its own: the enclosing one is the current spec
            raise AssayUsageError(
                f"{inside}; {argument} must be a spec of its own: copy the earlier spec, with its {SETTINGS}, "
                f"to a directory outside {shown(Path(rel))} (e.g. a checkout of the last release) and pass that.")
        raise AssayUsageError(f"{inside}; pass --spec {shown(Path(rel))}, the directory that holds {SETTINGS}.")
    kind = "dbt" if (spec_dir / DBT_PROJECT).is_file() else (
        "SQLMesh" if any((spec_dir / c).is_file() for c in SQLMESH_CONFIGS) else None)
    if kind is not None:
        raise AssayUsageError(
            f"{shown(spec_dir)} is a {kind} project, not an assay spec: it has no {SETTINGS}"
            + ("" if given else f" and `assay generate` recorded no spec for it in {MANIFEST}")
            + f". Pass --spec with the directory that holds your {SETTINGS} (it is remembered by the next "
            f"`assay generate`), or make an example project with `assay init DIR`."
            + (f" ({how} was {shown(spec_dir)}.)" if given else "")
        )
    return spec_dir


def resolve_spec(spec_dir: Optional[Path], project_dir: Path) -> Path:
    """The spec directory a command reads: `--spec`, else the one recorded by `assay generate`,
    else the project itself when it holds assay.yml, else its `spec/` folder, else the project."""
    if spec_dir is not None:
        return check_spec_dir(spec_dir, given=True)
    project_dir = Path(project_dir)
    recorded = recorded_spec_dir(project_dir)
    if recorded is not None:
        if not recorded.is_dir():
            raise ProjectError(
                f"{shown(project_dir / MANIFEST)} says the spec is in {shown(recorded)}, which does not exist "
                f"(moved or deleted?); pass --spec with the directory that holds {SETTINGS}, and run "
                "`assay generate` with it once so the project remembers it."
            )
        return check_spec_dir(recorded, given=False)
    if (project_dir / SETTINGS).is_file():
        return Path(os.path.normpath(project_dir))
    if (project_dir / "spec").is_dir():
        # a project keeping its spec in spec/ (what explain, report and maintain assumed before
        # the spec was recorded)
        return check_spec_dir(project_dir / "spec", given=False)
    from ..runtime.operator import not_a_project

    outside = not_a_project(project_dir, inside_one=True)
    if outside is not None:
        # a subdirectory of a project (its models/): its generated YAML is no spec, and reading it
        # as one told the user to fix assay's own files (an outside tester, session 43)
        raise outside
    return check_spec_dir(project_dir, given=False)


def known_entities(project, wanted: "list[str]", spec_dir: Path) -> None:
    """A usage error naming the spec read and what to pass, unless every name in `wanted` is an
    entity of `project` (the spec loaded from `spec_dir`).

    A spec with no entities is what a `--project` without a recorded spec and without assay.yml
    resolves to (any directory is a spec with default settings), so the operator is told which
    directory was read instead of "entities are" followed by nothing."""
    names = sorted(e.name for e in project.entities)
    unknown = [w for w in wanted if w not in names]
    if not unknown:
        return
    what = ", ".join(repr(u) for u in unknown)
    if not names:
        raise AssayUsageError(
            f"no entity {what}: the spec read, {shown(spec_dir)}, declares no entities (it holds no {SETTINGS} "
            f"and no entity files); pass --project with the project `assay generate` "
            f"wrote, or --spec with the directory that holds {SETTINGS}.")
    raise AssayUsageError(f"no entity {what} in the spec in {shown(spec_dir)}; pass one of {', '.join(names)}.")


def optional_spec(spec_dir: Optional[Path], project_dir: Path) -> Optional[Path]:
    """`--spec`, the recorded spec, or the project itself when it holds assay.yml (as `validate`
    finds it: an outside tester, session 41, was told to pass --spec there), for commands that
    work without one (`assay checks`)."""
    if spec_dir is not None:
        return check_spec_dir(spec_dir, given=True)
    recorded = recorded_spec_dir(Path(project_dir))
    if recorded is None and (Path(project_dir) / SETTINGS).is_file():
        return Path(os.path.normpath(project_dir))
    return recorded if recorded is not None and recorded.is_dir() else None


class Progress:
    """What a long command is doing, on stderr: a status line rewritten in place on a terminal,
    one plain line per step otherwise (a log, a CI job, a pipe), so stdout keeps only results.

    `step(text)` starts a step; `done()` clears the status line. Used as a context manager, the
    line is cleared however the command ends, so an error message never shares its line.
    `quiet` (the commands pass `--json`) shows nothing: a script reading JSON wants no chatter,
    also not on stderr, which many callers capture together with stdout.
    """

    def __init__(self, command: str, total: int, stream: Optional[TextIO] = None, tty: Optional[bool] = None,
                 quiet: bool = False):
        self.command = command
        self.quiet = quiet
        self.total = total
        # sys.stderr at the time of the call: under click's CliRunner that is the runner's capture.
        self.stream = stream or sys.stderr
        self.tty = bool(tty if tty is not None else _isatty(self.stream))
        self.n = 0
        self._width = 0

    def step(self, text: str) -> None:
        """Start the next step, described by `text` (`dbt build`, `gathering 3 entities`)."""
        self.n += 1
        if self.quiet:
            return
        line = f"assay {self.command} [{self.n}/{self.total}] {text}"
        if self.tty:
            pad = max(self._width - len(line), 0)
            self.stream.write("\r" + line + " " * pad)
            self._width = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def echo(self, text: str = "", err: bool = False) -> None:
        """Print a result line (stdout) without it landing on the status line."""
        self._clear()
        click.echo(text, err=err)

    def _clear(self) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def done(self) -> None:
        """Clear the status line (on a terminal); plain output needs no closing line."""
        self._clear()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.done()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def environment_option(func: Callable) -> Callable:
    """`--environment NAME`: on a SQLMesh project, the environment whose views are read (default prod)."""
    return click.option("--environment", default=None,
                        help="SQLMesh projects: the environment whose views are read (default: prod).")(func)


def build_command(project_dir: Path, sqlmesh: str = "plan") -> str:
    """The command that builds the project (`dbt build`, `sqlmesh plan`), with `cd DIR && ` when it
    is not the current directory: error messages and next steps name the right tool, in a form a
    shell runs as written (dbt reads a profiles.yml in its working directory, SQLMesh a relative
    DuckDB path from it)."""
    from ..runtime.warehouse import SQLMESH, project_kind

    where = shown(project_dir)
    if project_kind(project_dir) == SQLMESH:
        # `cd`, not `-p`: SQLMesh opens a gateway's relative DuckDB path from the directory it runs
        # in, so `sqlmesh -p DIR plan` from elsewhere plans an empty warehouse (session 45)
        return f"sqlmesh {sqlmesh}" if where == "." else f"cd {where} && sqlmesh {sqlmesh}"
    return "dbt build" if where == "." else f"cd {where} && dbt build"


def load_command(project_dir: Path) -> str:
    """The command that judges bronze loads newer than the last build: `dbt build`; on SQLMesh
    `sqlmesh run`, which evaluates the next interval (a plan of unchanged files plans nothing: an
    outside tester, session 48)."""
    return build_command(project_dir, sqlmesh="run")


def require_built(wh, entity: str, suffix: str, project_dir: Path, then: str = "") -> None:
    """Refuse, naming the warehouse read, an entity whose `silver.<entity><suffix>` relation no
    build wrote there: the engine's own "table does not exist, did you mean ..." named neither the
    warehouse nor what to do (an outside tester, session 45). `then` says what is missing for it."""
    from ..errors import WarehouseError

    silver = wh.project.schema("silver")
    if not wh.reader.exists(silver, f"{entity}{suffix}"):
        raise WarehouseError(f"{entity} was never built in the warehouse of {wh.describe} ({silver}.{entity}{suffix} "
                             f"is not there){then}; run `{build_command(project_dir)}` first, or pass --target, "
                             "--profiles-dir or --project for the warehouse the build wrote.")


def run_id_hint(project_dir: Path) -> str:
    """Where the run ids of the project's tool are found, for a message about an unknown one."""
    from ..runtime.warehouse import SQLMESH, project_kind

    if project_kind(project_dir) == SQLMESH:
        return "a SQLMesh run's id is `SQLMESH_PLAN: <plan id>` or `SQLMESH_RUN: <...>`"
    return "dbt's invocation_id, in target/run_results.json; `assay demo` prints it"


def warehouse_options(func: Callable) -> Callable:
    """`--profiles-dir DIR` and `--target NAME`: how a command reaches the project's warehouse.

    On a SQLMesh project `--target` names the gateway (default: the config's `default_gateway`)
    and `--profiles-dir` is refused (runtime/warehouse.py)."""
    func = click.option("--target", default=None,
                        help="The profile output to use (default: the profile's target); on a SQLMesh project, the "
                             "gateway (default: default_gateway).")(func)
    return click.option("--profiles-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                        help="Where profiles.yml is, when it is not beside the project (then DBT_PROFILES_DIR, ~/.dbt).")(func)
