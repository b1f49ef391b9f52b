"""The core API of the SQLMesh target; the CLI and tests call it, it never prints.

Generation imports sqlglot only: SQLMesh is needed to run the generated project, not to write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .api import load_project, require_entities
from .artifacts import WriteReport, write_project
from .ir.model import Project

CONFIG_FILES = ("config.yaml", "config.yml", "config.py")
DEFAULT_DIALECT = "duckdb"  # `assay generate sqlmesh` and `assay validate --target sqlmesh` without --dialect


@dataclass
class SQLMeshGenerateResult:
    project: Project
    report: WriteReport


def sqlmesh_files(project: Project, dialect: str = DEFAULT_DIALECT) -> dict[str, str]:
    """Everything assay owns in a SQLMesh project, as relative path -> text, sorted.

    `project` must come from `load_project(spec, target="sqlmesh", dialect=dialect)`: validation
    refuses what the SQLMesh target cannot realise on that dialect, and the emitter trusts it.
    """
    from .targets.sqlmesh import generate_sqlmesh

    return generate_sqlmesh(project, dialect)


def is_sqlmesh_project(project_dir: Path | str) -> bool:
    """A directory SQLMesh can load: it has a config file at its root."""
    return any((Path(project_dir) / name).exists() for name in CONFIG_FILES)


def generate_sqlmesh_project(
    spec_dir: Path | str,
    project_dir: Path | str,
    dialect: str = DEFAULT_DIALECT,
    project: Optional[Project] = None,
) -> SQLMeshGenerateResult:
    """Write the SQLMesh models, audits, external models and macro hook of a spec into a project.

    The spec is validated for the SQLMesh target on `dialect` (what it cannot realise there is
    refused by file and line, nothing written); a `project` passed in must have been.
    """
    project = project or load_project(spec_dir, target="sqlmesh", dialect=dialect)
    require_entities(project, spec_dir)
    report = write_project(Path(project_dir), sqlmesh_files(project, dialect), "sqlmesh", project.fingerprint,
                           schemas=dict(project.schemas))
    return SQLMeshGenerateResult(project, report)


def config_names(project_dir: Path | str, macro: str) -> bool:
    """Whether the project's config names `macro` (read as text: a config.py builds its statements
    in Python, so the name is all that can be looked for)."""
    for name in CONFIG_FILES:
        path = Path(project_dir) / name
        if path.exists() and macro in path.read_text(encoding="utf-8", errors="replace"):
            return True
    return False


@dataclass(frozen=True)
class ConfigStatement:
    """A statement of assay's that the user's SQLMesh config holds, and what `assay generate sqlmesh`
    says when it is missing or records into another meta schema than the spec's."""

    macro: str  # the macro's name, as the config names it
    stage: str  # `before_all` or `after_all`
    records: str  # what it records, as the note on a missing statement says it
    recorded: str  # the same, as the note on another meta schema says it
    without: str  # what goes wrong without it
    next_step: str  # the SQLMesh command whose records land in the wrong schema

    def text(self, meta_schema: str) -> str:
        """The statement, with the spec's meta schema: `@assay_record_environment('assay_meta')`."""
        return f"@{self.macro}('{meta_schema}')"


CONFIG_STATEMENTS = (
    # decision 0936: without it a failed plan of a development environment reads as prod's
    ConfigStatement("assay_record_environment", "before_all", "which environment a plan is for",
                    "each plan's environment",
                    "`assay table get` reads a failed plan of a development environment as prod's "
                    "(docs/sqlmesh.md, Environments)", "sqlmesh plan"),
    # decision 1164: without it a model whose SQL errors leaves no trace
    ConfigStatement("assay_record_errored_models", "after_all", "a model whose SQL errors", "a model whose SQL errors",
                    "`assay table get` reads an entity whose model errored as published "
                    "(docs/sqlmesh.md, \"A model that errors\")", "sqlmesh run"),
)


ENVIRONMENT, ERRORS = CONFIG_STATEMENTS


def environment_statement(meta_schema: str = "assay_meta") -> str:
    """The `before_all` statement that records which environment each plan or run is for, so that
    a failed build in a development environment is not read as prod's (decision 0936)."""
    return ENVIRONMENT.text(meta_schema)


def errors_statement(meta_schema: str = "assay_meta") -> str:
    """The `after_all` statement that records each entity whose own model errored in a run, as
    dbt's hook records it (decision 1164)."""
    return ERRORS.text(meta_schema)


def statement_meta(project_dir: Path | str, macro: str = "assay_record_environment") -> Optional[str]:
    """The meta schema the config's `@<macro>('<schema>')` (by default `@assay_record_environment`)
    records into, or None when the config names none (or builds it in Python, config.py, where no
    literal can be read)."""
    import re

    for name in CONFIG_FILES:
        path = Path(project_dir) / name
        if path.exists():
            found = re.search(rf"@{macro}\(\s*'([^']*)'\s*\)", path.read_text(encoding="utf-8", errors="replace"))
            if found:
                return found.group(1)
    return None


def duckdb_config(database: str = "warehouse.duckdb", dialect: str = "duckdb", meta_schema: str = "assay_meta") -> str:
    """A minimal SQLMesh config.yaml for a local DuckDB warehouse (tests, demos)."""
    return (
        f'before_all:\n  - "{environment_statement(meta_schema)}"\n'
        f'after_all:\n  - "{errors_statement(meta_schema)}"\n'
        "gateways:\n"
        "  local:\n"
        "    connection:\n"
        "      type: duckdb\n"
        f"      database: {database}\n"
        "default_gateway: local\n"
        "model_defaults:\n"
        f"  dialect: {dialect}\n"
    )


def postgres_config(host: str, port: int, user: str, password: str, database: str, version_num: int = 160000,
                    meta_schema: str = "assay_meta") -> str:
    """A minimal SQLMesh config.yaml for a Postgres warehouse (tests).

    Below PostgreSQL 16 (no pg_input_is_valid) the stand-in function is created before every
    plan and run; the macros read the server version from the connection.
    """
    pg15 = '  - "@assay_install_functions()"\n' if version_num < 160000 else ""
    return (f'before_all:\n{pg15}  - "{environment_statement(meta_schema)}"\n'
            f'after_all:\n  - "{errors_statement(meta_schema)}"\n') + (
        "gateways:\n"
        "  pg:\n"
        "    connection:\n"
        "      type: postgres\n"
        f"      host: {host}\n"
        f"      port: {port}\n"
        f"      user: {user}\n"
        f'      password: "{password}"\n'
        f"      database: {database}\n"
        "default_gateway: pg\n"
        "model_defaults:\n"
        "  dialect: postgres\n"
    )
