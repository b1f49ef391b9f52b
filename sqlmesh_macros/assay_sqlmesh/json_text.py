"""JSON builders: a value inside a JSON column, an object from named values, a whole row."""

from __future__ import annotations

import json as _json

from sqlglot import exp
from sqlmesh import macro

from . import redact_json
from ._core import AssayMacroError, as_text, dialect_of, lit, pick, postgres_version, render, string_arg, text, type_name


def _path_text(dialect: str, path: list[str]) -> str:
    # Each engine gets the keys in a form that needs no escaping beyond its own path syntax.
    if dialect == "duckdb":
        # JSON Pointer: '~' and '/' are the only characters it escapes.
        return lit("".join("/" + k.replace("~", "~0").replace("/", "~1") for k in path), dialect)
    if dialect in ("spark", "databricks"):
        return lit("$" + "".join("['" + k.replace("'", "\\'") + "']" for k in path), dialect)
    if dialect == "trino":
        return lit("$" + "".join('["' + k.replace('"', '\\"') + '"]' for k in path), dialect)
    return lit("$" + "".join('."' + k.replace("\\", "\\\\").replace('"', '\\"') + '"' for k in path), dialect)


def json_extract_sql(json_sql: str, path: list[str], dialect: str) -> str:
    if dialect == "duckdb":
        return f"JSON_EXTRACT_STRING({json_sql}, {_path_text(dialect, path)})"
    if dialect == "postgres":
        # A list of keys: they need no escaping at all.
        return f"JSON_EXTRACT_PATH_TEXT(CAST({json_sql} AS JSON), {', '.join(lit(k, dialect) for k in path)})"
    if dialect == "redshift":
        # Trailing true: NULL instead of an error on invalid JSON.
        return f"JSON_EXTRACT_PATH_TEXT({json_sql}, {', '.join(lit(k, dialect) for k in path)}, TRUE)"
    if dialect == "snowflake":
        return f"CAST(TRY_PARSE_JSON({json_sql}){''.join('[' + lit(k, dialect) + ']' for k in path)} AS VARCHAR)"
    if dialect in ("spark", "databricks"):
        return f"GET_JSON_OBJECT({json_sql}, {_path_text(dialect, path)})"
    if dialect == "trino":
        return f"JSON_EXTRACT_SCALAR({json_sql}, {_path_text(dialect, path)})"
    return f"JSON_VALUE({json_sql}, {_path_text(dialect, path)})"


# Whether a text is a JSON document the engine's own JSON reader accepts, per engine (`{v}`: the
# text; `{check}`: PostgreSQL's guard, chosen by server version). The dbt package's `json_valid`
# spells the same table.
JSON_VALID = {
    "duckdb": "JSON_VALID({v})",
    # jsonb's input parser, guarded as try_cast guards every cast; 15 has the stand-in function.
    "postgres": "{check}({v}, 'jsonb')",
    "redshift": "CAN_JSON_PARSE({v})",
    # A JSON null parses to a variant null, which is not SQL NULL.
    "snowflake": "(CASE WHEN {v} IS NOT NULL THEN NOT TRY_PARSE_JSON({v}) IS NULL END)",
    "bigquery": "(CASE WHEN {v} IS NOT NULL THEN NOT SAFE.PARSE_JSON({v}) IS NULL END)",
    # get_json_object never raises: it is NULL on text it cannot read, and on the document `null`.
    "spark": "(CASE WHEN {v} IS NOT NULL THEN NOT GET_JSON_OBJECT({v}, '$') IS NULL OR TRIM({v}) = 'null' END)",
    # sqlglot writes Databricks' get_json_object(x, '$') as the `x:` path syntax, which has no root.
    "databricks": "(CASE WHEN {v} IS NOT NULL THEN NOT TRY_PARSE_JSON({v}) IS NULL END)",
    "trino": "(CASE WHEN {v} IS NOT NULL THEN NOT TRY(JSON_PARSE({v})) IS NULL END)",
    "default": "({v} IS JSON)",
}


def json_valid_sql(value_sql: str, dialect: str) -> str:
    """Whether `value_sql` (already text) is a JSON document the engine's own JSON reader accepts:
    TRUE or FALSE, NULL on NULL; the guard of a JSON path read (decision 1123). Each engine
    answers with the parser its extraction reads through (the dbt package's `json_valid`)."""
    check = "PG_INPUT_IS_VALID" if dialect != "postgres" or postgres_version() >= 160000 else "ASSAY_INPUT_IS_VALID"
    return pick(JSON_VALID, dialect).format(v=value_sql, check=check)


def json_object_sql(pairs: list[tuple[str, str]], dialect: str) -> str:
    if dialect == "postgres":
        # Hand-assembled rather than json_build_object: that one caps at 50 pairs and prints
        # '"k" : v'; this gives the compact text DuckDB gives.
        parts = [f"{lit(_json.dumps(k) + ':', dialect)} || COALESCE(CAST(TO_JSON({v}) AS TEXT), 'null')" for k, v in pairs]
        return "('{' || " + (" || ',' || ".join(parts) if parts else "''") + " || '}')"
    if dialect == "redshift":
        return f"JSON_SERIALIZE(OBJECT({', '.join(f'{lit(k, dialect)}, {v}' for k, v in pairs)}))"
    if dialect == "snowflake":
        # Snowflake objects do not keep key order.
        return f"TO_JSON(OBJECT_CONSTRUCT_KEEP_NULL({', '.join(f'{lit(k, dialect)}, {v}' for k, v in pairs)}))"
    if dialect == "bigquery":
        # A STRUCT keeps field order and writes NULL as null.
        return f"TO_JSON_STRING(STRUCT({', '.join(f'{v} AS `{k}`' for k, v in pairs)}))"
    if dialect in ("spark", "databricks"):
        # to_json drops NULL fields unless told not to.
        return f"TO_JSON(NAMED_STRUCT({', '.join(f'{lit(k, dialect)}, {v}' for k, v in pairs)}), MAP('ignoreNullFields', 'false'))"
    if dialect == "trino":
        return f"JSON_OBJECT({', '.join(f'{lit(k, dialect)} VALUE {v}' for k, v in pairs)} NULL ON NULL)"
    return f"CAST(JSON_OBJECT({', '.join(f'{lit(k, dialect)}, {v}' for k, v in pairs)}) AS {type_name('string', dialect)})"


def row_json_sql(alias: str, redact: list[str], dialect: str) -> str:
    """The whole row as JSON text without the `redact` paths (`phone`, `payload.ssn`; decision 0943)."""
    whole, inside = redact_json.split(redact)
    if dialect in ("redshift", "trino", "snowflake"):
        # Snowflake has OBJECT_CONSTRUCT_KEEP_NULL(alias.*), but SQLMesh re-parses every macro
        # result and sqlglot cannot read a qualified star there.
        raise AssayMacroError(
            f"assay_row_json: {dialect} has no whole-row JSON that SQLMesh can carry; list the bronze columns and use assay_json_object"
        )
    if inside and dialect not in ("duckdb", "postgres", "spark", "databricks"):
        raise AssayMacroError(
            f"assay_row_json: {dialect} cannot remove a key inside a JSON column ({', '.join(sorted(inside))}); redact the whole column or load the value into a column of its own"
        )
    if dialect == "postgres":
        if inside:
            return redact_json.postgres_row(alias, whole, inside, lambda t, p: redact_json.postgres_document(
                t, p, json_valid_sql(as_text(t, dialect), dialect)))
        return f"CAST((TO_JSONB({alias}){''.join(' - ' + lit(c, dialect) for c in whole)}) AS TEXT)"
    if dialect in ("spark", "databricks"):
        if not redact:
            return f"TO_JSON(STRUCT({alias}.*))"
        # Null members kept through the map, as the dbt package's row_json keeps them.
        return redact_json.spark_row(f"TO_JSON(STRUCT({alias}.*), MAP('ignoreNullFields', 'false'))", whole, inside)
    if dialect == "bigquery":
        except_ = f" EXCEPT ({', '.join(whole)})" if whole else ""
        return f"TO_JSON_STRING((SELECT AS STRUCT {alias}.*{except_}))"
    string = type_name("string", dialect)
    if inside:
        return redact_json.duckdb_row(alias, whole, inside, lambda t, p: redact_json.duckdb_document(
            as_text(t, dialect), p, json_valid_sql(as_text(t, dialect), dialect)))
    if not whole:
        return f"CAST(TO_JSON({alias}) AS {string})"
    # RFC 7396 merge patch: a null member removes the key.
    patch = "{" + ", ".join(f"{_json.dumps(c)}: null" for c in whole) + "}"
    return f"CAST(JSON_MERGE_PATCH(TO_JSON({alias}), {lit(patch, dialect)}) AS {string})"


@macro()
def assay_json_extract_text(evaluator, value: exp.Expr, *path: str) -> exp.Expr:
    """The text at a key path inside a JSON column (`$.payload.a.b` -> ('a', 'b')), NULL when absent.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_extract_text(b.payload, 'customer', 'id')", "postgres")
    "JSON_EXTRACT_PATH_TEXT(CAST(b.payload AS JSON), 'customer', 'id')"
    """
    d = dialect_of(evaluator)
    keys = [string_arg(k, "a JSON key") for k in path]
    return render(json_extract_sql(text(value, d), keys, d), d)


@macro()
def assay_json_valid(evaluator, value: exp.Expr) -> exp.Expr:
    """Whether a value is a JSON document the engine reads: the guard of a JSON path read, NULL on NULL.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_valid(b.payload)", "duckdb")
    'JSON_VALID(CAST(b.payload AS TEXT))'
    """
    d = dialect_of(evaluator)
    return render(json_valid_sql(as_text(value, d), d), d)


@macro()
def assay_json_object(evaluator, *pairs: exp.Tuple) -> exp.Expr:
    """A JSON object as text, keys in the given order: `@assay_json_object(('order_id', s.order_id))`.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_object(('order_id', s.order_id), ('line_no', s.line_no))", "duckdb")
    "CAST(JSON_OBJECT('order_id', s.order_id, 'line_no', s.line_no) AS TEXT)"
    """
    d = dialect_of(evaluator)
    items = []
    for pair in pairs:
        if len(pair.expressions) != 2:
            raise AssayMacroError(f"assay_json_object: each pair is ('key', value), got {pair.sql()}")
        key, value = pair.expressions
        items.append((string_arg(key, "a JSON key"), text(value, d)))
    return render(json_object_sql(items, d), d)


@macro()
def assay_row_json(evaluator, alias: exp.Expr, *redact: str) -> exp.Expr:
    """The whole row of a table alias as JSON text, without the redacted columns (a reject's `raw`);
    a dotted argument (`'payload.ssn'`) removes that key inside the column's JSON document instead.

    It reads every column the relation has, not only the mapped ones, so a replay after a spec
    change still finds a column nobody mapped before.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_row_json(bronze_row, 'email')", "postgres")
    "CAST((TO_JSONB(bronze_row) - 'email') AS TEXT)"
    """
    d = dialect_of(evaluator)
    name = alias.name if isinstance(alias, (exp.Column, exp.Identifier, exp.Table)) else text(alias, d)
    return render(row_json_sql(name, [string_arg(c, "a redacted path") for c in redact], d), d)
