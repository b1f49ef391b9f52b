"""`assay` entry point. Commands live in their own modules and register here.

This is also the one place where errors become output and exit codes (README, "Exit codes"):
commands raise, `AssayGroup.main` prints and exits. 0 success; 1 a problem with the spec, the
project or the warehouse; 2 checks did not pass; 3 a usage error; 130 interrupted (Ctrl-C). A
user's mistake never ends in a traceback.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

import click

from .. import __version__
from ..errors import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, AssayError
from .validate_cmd import validate_cmd

EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)


class AssayGroup(click.Group):
    """The `assay` group: runs a command and turns whatever it raised into output and an exit code."""

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, **extra: Any) -> Any:
        """Run the command line; exit with its code (or return it when `standalone_mode` is False)."""
        code = run_reporting_errors(
            lambda: super(AssayGroup, self).main(args, prog_name, complete_var, standalone_mode=False, **extra)
        )
        if standalone_mode:
            sys.exit(code)
        return code

    def invoke(self, ctx: click.Context) -> None:
        # A command's return value is never an exit code: only what it raises decides that.
        super().invoke(ctx)


def run_reporting_errors(invoke) -> int:
    """Call `invoke` (Click's non-standalone main) and map every way it can end to an exit code."""
    try:
        rv = invoke()
        # Non-standalone Click returns the code of an explicit `Exit` (commands return None).
        return rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK
    except AssayError as exc:
        for line in exc.out:
            click.echo(line)
        for line in exc.details:
            click.echo(line, err=True)
        if exc.message:
            click.echo(exc.label + exc.message, err=True)
        return exc.exit_code
    except click.UsageError as exc:
        # Click's own code for these is 2, which assay keeps for "checks did not pass".
        exc.show()
        return EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code if exc.exit_code != 2 else EXIT_PROBLEM
    except click.Abort as exc:
        if isinstance(exc.__cause__ or exc.__context__, KeyboardInterrupt):
            # Ctrl-C: the shell's convention (128 + SIGINT), so a script tells it from a failure;
            # a child the command ran (dbt) was stopped before this (runtime/dbt.py).
            click.echo("assay: interrupted", err=True)
            return EXIT_INTERRUPTED
        click.echo("Aborted!", err=True)
        return EXIT_PROBLEM
    except OSError as exc:
        # A file or directory the command needed could not be read or written: the user's
        # environment, not a bug, so name the path and the cause instead of a traceback.
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        click.echo(f"Error: cannot use{where}: {exc.strerror or exc}; check that the path exists and that you may read and write it.", err=True)
        return EXIT_PROBLEM


@click.group(cls=AssayGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
def cli() -> None:
    """assay: data-quality specs compiled into dbt and SQLMesh projects."""


cli.add_command(validate_cmd)


OPTIONAL_COMMANDS = ("generate_cmd", "init_cmd", "plan_cmd", "replay_cmd", "checks_cmd", "maintain_cmd", "explain_cmd", "report_cmd", "table_cmd",
                     "anomalies_cmd")


def _register_optional() -> None:
    # Each command module registers on its own, lazily, so that `assay validate` stays fast
    # and one module that cannot import (a missing optional dependency) takes no other
    # command down with it.
    import importlib

    for name in OPTIONAL_COMMANDS:
        try:
            mod = importlib.import_module(f"{__package__}.{name}")
        except ImportError:  # pragma: no cover - an optional dependency is missing
            continue
        for cmd in getattr(mod, "COMMANDS", ()):
            cli.add_command(cmd)


_register_optional()


def main() -> None:
    """The console script `assay`."""
    import logging

    # sqlglot warns on stderr when it cannot write a construct of a user's SQL back (`PIVOT
    # unsupported`) while assay only reads that SQL (a check file's lineage): not the user's
    # business in `assay report --json`; a refusal assay needs is its own message.
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    from .terminal import install

    install()
    cli(prog_name="assay")


if __name__ == "__main__":
    main()
