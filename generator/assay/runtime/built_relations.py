"""Which relations the build actually wrote: the one place the operator commands learn where the
spec's schemas landed (decision 0930, the seed of the operator core).

A spec names its schemas by role (`silver`, `gold`, `meta`, `bronze`). Where the tables land is
the build tool's decision, not the spec's:

- dbt passes every custom schema through the project's `generate_schema_name`. With assay's
  macro (`assay init` writes it) `silver` stays `silver`; with dbt's default it becomes
  `<target schema>_silver`; a user's own macro may do anything. dbt writes the answer into
  `target/manifest.json`: each node's `schema` (what it was built into) beside its
  `config.schema` (what the spec asked for). That file is read first.
- Without a manifest (never parsed, or `dbt clean`), dbt's default and assay's macro are computed
  from the profile; a macro of the user's own cannot be, and the command is refused (exit 1)
  with the command that writes the manifest.
- SQLMesh publishes prod's views under the model names' own schemas, and another environment's
  under `<schema>__<environment>` (runtime/sqlmesh_gateway.py reads its state).

Every operator command (report, explain, maintain, replay, checks, check list|rows, table
list|get) asks `built_project` for the spec's Project with the schemas the build used, and reads
only those: a table that exists is never reported as "not there" because of a schema prefix.
Without the spec at hand, `results_schema` answers for the check results alone, from the build's
own record (decision 0913); the warehouse's catalog is never asked which schemas hold them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Optional

import yaml

from ..errors import ProjectError
from ..ir.model import Project

_SCHEMA_MACRO = re.compile(r"\{%-?\s*macro\s+generate_schema_name\s*\(")
# The sources assay generates read bronze as `source('bronze', <table>)` (targets/dbt).
BRONZE_SOURCE = "bronze"
_NODE_TYPES = ("model", "snapshot")


def built_project(project: Project, project_dir: Path, *, conn=None, dialect: Optional[str] = None,
                  environment: Optional[str] = None, profiles_dir: Optional[Path] = None,
                  target: Optional[str] = None, whole_environment: bool = True) -> Project:
    """`project` with each schema role mapped to the schema the build wrote it to.

    dbt: from the project's `target/manifest.json`, else computed from the profile for dbt's
    default and for assay's `generate_schema_name`; a ProjectError (exit 1) saying how to
    write the manifest when the project's own macro decides. SQLMesh: the environment's
    schemas (`conn` and `dialect` are needed only for another environment than prod).
    """
    from .warehouse import SQLMESH, in_environment, project_kind

    if project_kind(project_dir) == SQLMESH:
        if environment is None and conn is not None:
            # prod, the default, checked as `--environment prod` is: a prod no plan wrote beside
            # development environments, or a schema the spec moved since the last plan, would read
            # as "never built" (an outside tester, session 40)
            return in_environment(project, project_dir, "prod", conn, dialect, whole_environment)
        return in_environment(project, project_dir, environment, conn, dialect, whole_environment) if environment else project
    mapped = dbt_schemas(project, Path(project_dir), profiles_dir, target)
    return dataclasses.replace(project, schemas=tuple((role, mapped.get(role, name)) for role, name in project.schemas))


# The node that creates the results table (targets/dbt/declared_checks.py); `assay_check_rows`
# is created beside it by its post-hook, so one schema holds both.
RESULTS_NODE = "assay_check_results"


def results_schema(project_dir: Path, profiles_dir: Optional[Path] = None, target: Optional[str] = None) -> Optional[str]:
    """The schema the build wrote its check results (and kept rows) to, known without the spec.

    dbt: the schema the manifest says the `assay_check_results` node was built into; else the
    meta schema `assay generate` recorded (.assay/manifest.json), mapped as `dbt_schemas` maps a
    spec's. SQLMesh: the recorded meta schema (its results are plain tables, the same for every
    environment). None when the build left no record of where (decision 0913)."""
    from ..artifacts import recorded_schemas
    from .warehouse import SQLMESH, project_kind

    recorded = recorded_schemas(Path(project_dir)) or {}
    if project_kind(project_dir) == SQLMESH:
        return recorded.get("meta")
    if "meta" in recorded:
        # the manifest's schemas when it was written for this target, else computed for it
        return _dbt_schemas(tuple(recorded.items()), Path(project_dir), profiles_dir, target).get("meta")
    manifest = _manifest(manifest_path(Path(project_dir)))
    built = {node["schema"] for node in _own_nodes(manifest) if node.get("name") == RESULTS_NODE and node.get("schema")}
    return built.pop() if len(built) == 1 else None


def manifest_path(project_dir: Path) -> Path:
    """Where dbt writes the manifest: `target-path` of dbt_project.yml (or DBT_TARGET_PATH), default target/."""
    folder = os.environ.get("DBT_TARGET_PATH")
    if not folder:
        conf = _project_conf(project_dir)
        folder = conf["target-path"] if isinstance(conf.get("target-path"), str) else "target"
    return project_dir / folder / "manifest.json"


def dbt_schemas(project: Project, project_dir: Path, profiles_dir: Optional[Path] = None,
                target: Optional[str] = None) -> dict[str, str]:
    """{role: schema the dbt build wrote it to} for every role of the spec (see the module's docstring)."""
    return _dbt_schemas(project.schemas, project_dir, profiles_dir, target)


def _dbt_schemas(schemas: tuple, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str]) -> dict[str, str]:
    """`dbt_schemas` for the (role, schema) pairs a spec names."""
    path = manifest_path(project_dir)
    manifest = _manifest(path)
    found = _from_manifest(schemas, manifest, path, project_dir)
    if found is not None and _of_target(found, manifest, schemas, project_dir, profiles_dir, target):
        return found
    return _computed(schemas, project_dir, profiles_dir, target, path, stale=found is not None)


def _output_database(output: dict) -> Optional[str]:
    """The database name dbt gives the target's relations (a DuckDB file's stem, PostgreSQL's
    dbname), None where the adapter has none to compare (Spark)."""
    kind = output.get("type")
    if kind == "duckdb":
        if output.get("database"):
            return str(output["database"])
        where = str(output.get("path") or ":memory:")
        return "memory" if where == ":memory:" else Path(where).stem
    if kind == "postgres":
        return str(output.get("dbname") or output.get("database") or "") or None
    return None


def _of_target(found: dict[str, str], manifest: Optional[dict], schemas: tuple, project_dir: Path,
               profiles_dir: Optional[Path], target: Optional[str]) -> bool:
    """Whether the manifest was written for the target the command reads (session 36: built with
    `--target dev` last, `--target prod` read dev's schemas in prod's file and found nothing): its
    relations' database is the target's; and the invocation that wrote it named that target in
    run_results.json, or, where that cannot be told (a `dbt parse` writes no run results) and the
    naming is known (dbt's default, assay's macro), its schemas are the ones the target's build
    writes. A manifest the target's own build wrote is believed over the naming the project has
    now (a `generate_schema_name` added since the build moved nothing yet: an outside tester,
    session 45). No profile to compare with: the manifest is all there is."""
    from .warehouse import profile_target

    try:
        read = profile_target(project_dir, profiles_dir, target)
    except Exception:  # noqa: BLE001 - no readable profile: nothing to compare the manifest with
        return True
    database = _output_database(read.output)
    built = {str(n["database"]) for n in _own_nodes(manifest) if n.get("database")}
    if database and built and database not in built:
        return False
    written_for = _manifest_target(project_dir, manifest)
    if written_for is not None:
        return (written_for or profile_target(project_dir, profiles_dir, None).target) == read.target
    try:
        expected = _computed(schemas, project_dir, profiles_dir, target, manifest_path(project_dir))
    except ProjectError:
        # The project's own macro names the schemas, and nothing says which target a `dbt parse`
        # wrote the manifest for (an outside tester, session 45: after `dbt parse --target dev`,
        # `maintain --target prod` ran retention on dev's reject tables): dbt is asked (`_parsed`).
        return False
    return all(expected.get(role) == schema for role, schema in found.items())


def _manifest_target(project_dir: Path, manifest: Optional[dict]) -> Optional[str]:
    """The target the invocation that wrote the manifest built (`""`: the profile's default, it
    named none), read from run_results.json when the same invocation wrote both; None when that
    cannot be told (`dbt parse` writes no run results, and a later one leaves an older file)."""
    results = _manifest(Path(project_dir) / "target" / "run_results.json")
    invocation = ((manifest or {}).get("metadata") or {}).get("invocation_id")
    if not results or not invocation or (results.get("metadata") or {}).get("invocation_id") != invocation:
        return None
    return str((results.get("args") or {}).get("target") or "")


# Each role's tables a build always writes, by name, and how a message calls them: a manifest
# whose nodes of that name sit in another schema than the spec's says the spec moved it.
_ROLE_NODES = {"silver": lambda name: name.endswith("__staged"), "gold": lambda name: name == "mart_data_quality",
               "meta": lambda name: name in ("assay_check_results", "assay_events")}
_ROLE_TABLES = {"silver": "staged tables", "gold": "quality mart", "meta": "check results"}


def _manifest(path: Path) -> Optional[dict]:
    """dbt's manifest, or None when there is none (or it cannot be read: then it says nothing)."""
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def _own_nodes(manifest: Optional[dict]):
    """The models and snapshots of the project itself (not of its packages) in the manifest."""
    own = ((manifest or {}).get("metadata") or {}).get("project_name")
    for node in ((manifest or {}).get("nodes") or {}).values():
        if node.get("resource_type") in _NODE_TYPES and (not own or node.get("package_name") == own):
            yield node


def _from_manifest(schemas: tuple, manifest: Optional[dict], path: Path, project_dir: Path) -> Optional[dict[str, str]]:
    """The roles' built schemas as the manifest records them; None when it holds no node of this spec."""
    if manifest is None:
        return None
    own = (manifest.get("metadata") or {}).get("project_name")
    built: dict[str, set[str]] = {}
    for node in _own_nodes(manifest):
        asked = (node.get("config") or {}).get("schema")
        if asked and node.get("schema"):
            built.setdefault(asked, set()).add(node["schema"])
    for source in (manifest.get("sources") or {}).values():
        if source.get("source_name") == BRONZE_SOURCE and (not own or source.get("package_name") == own):
            built.setdefault(("source", BRONZE_SOURCE), set()).add(source.get("schema"))
    out: dict[str, str] = {}
    for role, name in schemas:
        into = built.get(("source", BRONZE_SOURCE) if role == "bronze" else name, set())
        if len(into) > 1:
            raise ProjectError(
                f"{_shown(path)} says dbt built the spec's `{name}` tables into several schemas ({', '.join(sorted(into))}), "
                f"so assay cannot tell which to read; make the project's generate_schema_name give one schema per custom "
                f"schema (`assay init` writes one that keeps the names), then `dbt build` in {_shown(project_dir)}."
            )
        if into:
            out[role] = into.pop()
    for role in sorted(set(_ROLE_NODES) - set(out)):
        spec_schema = dict(schemas).get(role)
        moved = sorted({(node.get("config") or {}).get("schema") for node in _own_nodes(manifest)
                        if _ROLE_NODES[role](str(node.get("name", "")))} - {None, spec_schema})
        if moved:
            # The spec's schema moved since the build (assay.yml): its new schema holds nothing
            # yet, and an empty answer would read as "never built" or "no check results" (silver:
            # session 36; gold and meta: an outside tester, session 40).
            raise ProjectError(
                f"{_shown(path)} says the last dbt build wrote the {_ROLE_TABLES[role]} into `{', '.join(moved)}`, but "
                f"the spec's {role} schema is now `{spec_schema}`, which no build has written yet; run `dbt build` in "
                f"{_shown(project_dir)} (the tables of the old schema stay there, unread: docs/plan.md, "
                "`schema_changed`), then run this again."
            )
    # A manifest of another spec (or of a project not generated yet) says nothing about this one.
    return out if "silver" in out else None


def _computed(schemas: tuple, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str],
              manifest: Path, stale: bool = False) -> dict[str, str]:
    """Without a manifest (or with one of another target, `stale`): dbt's default naming or assay's
    macro, both known; a user's macro refused."""
    from ..scaffold import GENERATE_SCHEMA_NAME
    from .warehouse import profile_output

    override = schema_override(project_dir)
    if override is not None and override.read_text(encoding="utf-8", errors="replace").strip() == GENERATE_SCHEMA_NAME.strip():
        return dict(schemas)
    if override is not None:
        if stale:
            # the manifest is another target's, or nothing says whose: dbt itself says where this
            # target's build puts the tables
            return _parsed(schemas, project_dir, profiles_dir, target, override)
        raise ProjectError(
            f"{_shown(override)} decides where dbt puts the tables, and there is no {_shown(manifest)} saying where it put "
            f"them; run `dbt parse` (or `dbt build`) in {_shown(project_dir)} so that dbt writes it, then run this again."
        )
    prefix = str(profile_output(project_dir, profiles_dir, target).get("schema") or "main")
    # dbt's default generate_schema_name: `<target schema>_<custom schema>`; sources keep their schema.
    return {role: name if role == "bronze" else f"{prefix}_{name}" for role, name in schemas}


def _project_conf(project_dir: Path) -> dict:
    try:
        conf = yaml.safe_load((project_dir / "dbt_project.yml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        conf = {}
    return conf if isinstance(conf, dict) else {}


def schema_override(project_dir: Path) -> Optional[Path]:
    """The project's own `generate_schema_name` macro file, or None when dbt's default applies."""
    paths = _project_conf(project_dir).get("macro-paths")
    for folder in [project_dir / p for p in (paths if isinstance(paths, list) else ["macros"]) if isinstance(p, str)]:
        for path in sorted(folder.rglob("*.sql")) if folder.is_dir() else []:
            try:
                if _SCHEMA_MACRO.search(path.read_text(encoding="utf-8", errors="replace")):
                    return path
            except OSError:
                continue
    return None


def _shown(path: Path) -> str:
    return Path(os.path.normpath(path)).as_posix()


def _parsed(schemas: tuple, project_dir: Path, profiles_dir: Optional[Path], target: Optional[str],
            override: Path) -> dict[str, str]:
    """{role: schema} as dbt places the target's nodes under the project's own
    `generate_schema_name`: `dbt parse` for the target read, into a scratch target path (the
    project's own target/ and logs are left as they are; decision 1160)."""
    from .warehouse import profile_target

    read = profile_target(project_dir, profiles_dir, target)
    # once per process for the same project, profile and naming macro: a command asks for the
    # schemas more than once (the spec's, the check results'), and each parse costs seconds
    key = (str(Path(project_dir).resolve()), read.target, schemas, *(_text(f) for f in (
        read.path, Path(project_dir) / "dbt_project.yml", override)))
    if key not in _PARSED:
        _PARSED[key] = _parse(schemas, project_dir, read, override)
    return dict(_PARSED[key])


# `_parsed`'s answers in this process, by what they depend on
_PARSED: dict[tuple, dict[str, str]] = {}


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _parse(schemas: tuple, project_dir: Path, read, override: Path) -> dict[str, str]:
    """`dbt parse` of `read`'s target into a scratch folder, and the schemas its manifest says."""
    import subprocess
    import tempfile

    from .dbt import dbt_executable

    with tempfile.TemporaryDirectory(prefix="assay-parse-") as scratch:
        cmd = [dbt_executable(), "--quiet", "parse", "--project-dir", str(Path(project_dir).resolve()),
               "--profiles-dir", str(read.path.parent.resolve()), "--target", read.target,
               "--target-path", scratch, "--log-path", scratch]
        env = {**os.environ, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "DBT_USE_COLORS": "false"}
        env.pop("DBT_TARGET_PATH", None)
        try:
            proc = subprocess.run(cmd, cwd=str(Path(project_dir).resolve()), env=env, capture_output=True,
                                  text=True, timeout=600)
        except subprocess.TimeoutExpired:
            proc = None
        path = Path(scratch) / "manifest.json"
        manifest = _manifest(path) if proc is not None and proc.returncode == 0 else None
        found = _from_manifest(schemas, manifest, manifest_path(project_dir), project_dir) if manifest else None
    if found is None:
        said = ("it did not end in 600 s" if proc is None
                else " ".join(((proc.stdout or "") + (proc.stderr or "")).split()[-60:]) if proc.returncode != 0
                else "the project it parsed holds none of the spec's tables: run `assay generate dbt` first")
        raise ProjectError(
            f"{_shown(override)} decides where dbt puts the tables, and {_shown(manifest_path(project_dir))} was written "
            f"for another target than {read.target!r} (or nothing says for which); assay ran `dbt parse --target "
            f"{read.target}` to ask dbt where that target's tables are, and it did not answer ({said}); run `dbt "
            f"build --target {read.target}` in {_shown(project_dir)}, then run this again."
        )
    return found
