"""Refusals of names that reach SQL but no other validator reads: schemas, grantees, the
tables and columns of `tables_version` documents, SQL check file names (decision 0900).

Each is checked against the one identifier rule (`assay.identifiers`), with `fullmatch`, and
refused with its file and line and the rule to follow; a refused name never reaches a
generated file, where it could end a quoted identifier or be read as SQL.
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from ..identifiers import IDENTIFIER_RULE, is_identifier
from ..spec.loader import SETTINGS_FILE
from .context import Context

SCHEMA_KEYS = ("bronze", "silver", "gold", "meta")


def shown(name) -> str:
    """A refused name as a message quotes it: in backticks, or as a JSON string when it holds
    a backtick or a character that does not print (a newline would split the message)."""
    if isinstance(name, str) and len(name) > 80:
        return f"{shown(name[:80])} (the first 80 of {len(name):,} characters)"
    if isinstance(name, str) and name.isprintable() and "`" not in name:
        return f"`{name}`"
    return json.dumps(name, ensure_ascii=False) if isinstance(name, str) else repr(name)


def check_names(ctx: Context) -> None:
    """Refuse every schema, grantee, declared table or column and check file name that is not an identifier."""
    _check_schemas(ctx)
    _check_grants(ctx)
    _check_tables(ctx)
    _check_check_files(ctx)


def _check_schemas(ctx: Context) -> None:
    schemas = ctx.loaded.settings.schemas
    for key in SCHEMA_KEYS:
        name = getattr(schemas, key)
        if not is_identifier(name):
            ctx.report(SETTINGS_FILE, schemas.line(key) or schemas.line(), f"`schemas.{key}` is {shown(name)}, which is not a schema name; write {IDENTIFIER_RULE}.")
        elif key != "bronze" and name.lower() == schemas.bronze.lower():
            # The build writes its tables there: an entity named like a bronze table would replace
            # the raw rows every rebuild and replay read (an outside tester, session 41).
            ctx.report(SETTINGS_FILE, schemas.line(key) or schemas.line(),
                       f"`schemas.{key}` is `{name}`, the bronze schema: the build would write its tables among the "
                       f"raw ones and could replace a bronze table of the same name; write a schema of its own "
                       f"(the default is `{type(schemas).model_fields[key].default}`).")


def _check_grants(ctx: Context) -> None:
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.grants is None:
            continue
        for grantee in ent.grants.select:
            if not is_identifier(grantee):
                ctx.report(file, ent.grants.line("select") or ent.line("grants"), f"entity `{name}` grants select to {shown(grantee)}, which is not a role name; write {IDENTIFIER_RULE}.")


def _check_tables(ctx: Context) -> None:
    for file, doc, _raw in ctx.loaded.table_docs:
        for tname, table in doc.tables.items():
            line = table.line() or doc.line("tables")
            parts = tname.split(".")
            if len(parts) == 2 and not all(is_identifier(p) for p in parts):
                ctx.report(file, line, f"table {shown(tname)} is not `<schema>.<table>` of two plain names; write {IDENTIFIER_RULE}, for each part.")
            for key, names in (("columns", table.columns or []), ("grain", table.grain)):
                for col in names:
                    if not is_identifier(col):
                        ctx.report(file, table.line(key) or line, f"table `{tname}` lists {shown(col)} under `{key}:`, which is not a column name; write {IDENTIFIER_RULE}.")


def _check_check_files(ctx: Context) -> None:
    prefix = ctx.loaded.checks_dir.rstrip("/") + "/"
    for rel_path, _text in ctx.loaded.check_files:
        inner = rel_path[len(prefix):] if rel_path.startswith(prefix) else rel_path
        path = PurePosixPath(inner)
        parts = list(path.parent.parts) + [path.stem if path.suffix == ".sql" else path.name]
        bad = [p for p in parts if not is_identifier(p)]
        if bad:
            ctx.report(rel_path, 1, f"check file path {shown(inner)} holds {shown(bad[0])}, which is not a plain name; a check file is checks/<schema>/<table>/<name>.sql where each part is a name of {IDENTIFIER_RULE}.", "SQL_CHECK_INVALID")
