"""`assay` entry point. Commands live in their own modules and register here."""

from __future__ import annotations

import click

from .. import __version__
from .validate_cmd import validate_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="assay")
def cli() -> None:
    """assay: data-quality specs compiled into dbt and SQLMesh projects."""


cli.add_command(validate_cmd)


OPTIONAL_COMMANDS = ("generate_cmd", "init_cmd", "plan_cmd", "replay_cmd", "checks_cmd")


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
    cli(prog_name="assay")


if __name__ == "__main__":
    main()
