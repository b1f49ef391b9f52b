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


def _register_optional() -> None:
    # Commands whose modules may import heavier parts of assay register lazily so
    # that `assay validate` stays fast.
    from . import generate_cmd, init_cmd  # noqa: F401

    for mod in (generate_cmd, init_cmd):
        for cmd in getattr(mod, "COMMANDS", ()):
            cli.add_command(cmd)


try:
    _register_optional()
except ImportError:  # pragma: no cover - during bootstrap, before those modules exist
    pass


def main() -> None:
    cli(prog_name="assay")


if __name__ == "__main__":
    main()
