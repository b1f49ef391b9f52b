"""JSON builders: a value inside a JSON column, an object from named values, a whole row."""

from __future__ import annotations

import json as _json

from sqlglot import exp
from sqlmesh import macro

from . import redact_json
from .text import regex_match_sql
from ._core import JSON_NUL_ESCAPE, AssayMacroError, as_text, dialect_of, lit, pick, postgres_version, render, string_arg, text, type_name


def _path(dialect: str, path: list[str]) -> str:
    """The text of the path addressing `path` (keys from the root; none: the document itself) in
    the form the engine's path-taking functions read, before quoting. Each engine gets the keys in
    a form that needs no escaping beyond its own path syntax."""
    if dialect == "duckdb":
        # JSON Pointer: '~' and '/' are the only characters it escapes.
        return "".join("/" + k.replace("~", "~0").replace("/", "~1") for k in path)
    if dialect in ("spark", "databricks"):
        return "$" + "".join("['" + k.replace("'", "\\'") + "']" for k in path)
    if dialect == "trino":
        return "$" + "".join('["' + k.replace('"', '\\"') + '"]' for k in path)
    return "$" + "".join('."' + k.replace("\\", "\\\\").replace('"', '\\"') + '"' for k in path)


def _path_text(dialect: str, path: list[str]) -> str:
    return lit(_path(dialect, path), dialect)


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
    # the escape of U+0000 is refused on every engine, as jsonb refuses it (decision 1123, amended in session 33)
    return f"({pick(JSON_VALID, dialect).format(v=value_sql, check=check)} AND NOT {regex_match_sql(value_sql, JSON_NUL_ESCAPE, dialect)})"


# One step of a path read's shape test (decision 1130): TRUE when the value at a prefix of the path
# (the document itself for the empty prefix) is present and neither an object nor a JSON null,
# FALSE when it is one, NULL when absent; asked through the reader the engine's extraction or
# guard reads with. (document form, inner form) per engine; slots: `{v}` the text, `{path}` the
# engine's path literal of the prefix, `{array}` its keys as a text[] (Postgres), `{at}` Redshift's
# text at it, `{brackets}` its keys as subscripts (Snowflake), `{star}` Spark's path of it under
# `[*]`, `{first}` Spark's pattern of a document that is an object or null. The dbt package's `_json_step_blocked` spells the same table.
JSON_STEP_BLOCKED = {
    "duckdb": ("JSON_TYPE({v}, {path}) NOT IN ('OBJECT', 'NULL')",) * 2,
    # json, as the extraction reads it (jsonb agrees, duplicate keys included: the last wins).
    "postgres": ("JSON_TYPEOF(CAST({v} AS JSON)) NOT IN ('object', 'null')",
                 "JSON_TYPEOF(CAST({v} AS JSON) #> {array}) NOT IN ('object', 'null')"),
    # JSON_EXTRACT_PATH_TEXT gives a string's content and an object's JSON alike, '' when absent:
    # a string holding object text passes as an object here.
    "redshift": ("JSON_TYPEOF(JSON_PARSE({v})) NOT IN ('object', 'null')",
                 "CASE WHEN NULLIF({at}, '') IS NOT NULL THEN CASE WHEN CAN_JSON_PARSE({at}) "
                 "THEN JSON_TYPEOF(JSON_PARSE({at})) ELSE 'string' END NOT IN ('object', 'null') END"),
    "snowflake": ("TYPEOF(TRY_PARSE_JSON({v}){brackets}) NOT IN ('OBJECT', 'NULL_VALUE')",) * 2,
    "bigquery": ("JSON_TYPE(JSON_QUERY(SAFE.PARSE_JSON({v}), {path})) NOT IN ('object', 'null')",) * 2,
    # get_json_object gives a string's content without quotes ($.a of {"a":"{x"} reads `{x`): the
    # document is told by its first character, a value inside by reading the document as Spark
    # writes it back, wrapped in an array, under `[*]`, where a string keeps its quotes.
    "spark": ("NOT {v} RLIKE {first}", "SUBSTR(GET_JSON_OBJECT(CONCAT('[', GET_JSON_OBJECT({v}, '$'), ']'), {star}), 1, 1) <> '{{'"),
    # sqlglot writes Databricks' get_json_object as the `x:` path syntax: the guard's variant reader.
    "databricks": ("NOT SUBSTR(TO_JSON(TRY_VARIANT_GET(TRY_PARSE_JSON({v}), {path}, 'VARIANT')), 1, 1) IN ('{{', 'n')",) * 2,
    # JSON_FORMAT writes the value as JSON: its first character tells the kind.
    "trino": ("NOT SUBSTR(JSON_FORMAT(JSON_EXTRACT({v}, {path})), 1, 1) IN ('{{', 'n')",) * 2,
    # SQL/JSON: JSON_VALUE reads a scalar (NULL for an object, an array or null), JSON_QUERY an
    # object or an array.
    "default": ("JSON_VALUE({v}, {path}) IS NOT NULL OR JSON_QUERY({v}, {path}) LIKE '[%'",) * 2,
}


def json_path_blocked_sql(value_sql: str, path: list[str], dialect: str) -> str:
    """Whether the shape of a readable JSON document stops a read of `path` (decision 1130): the
    document, or the value at a proper prefix of the path, is present and neither an object nor a
    JSON null. FALSE for a missing key, a JSON null and SQL NULL (the dbt package's
    `json_path_blocked`)."""
    document, inner = pick(JSON_STEP_BLOCKED, dialect)
    steps = []
    for prefix in (path[:i] for i in range(len(path))):
        keys = ", ".join(lit(k, dialect) for k in prefix)
        slots = {
            "v": value_sql, "path": _path_text(dialect, prefix),
            "array": f"CAST(ARRAY[{keys}] AS TEXT[])", "at": f"JSON_EXTRACT_PATH_TEXT({value_sql}, {keys}, TRUE)",
            "brackets": "".join(f"[{lit(k, dialect)}]" for k in prefix),
            "star": lit("$[*]" + _path("spark", prefix)[1:], dialect), "first": lit(r"^\s*[{n]", dialect),
        }
        steps.append("(" + (inner if prefix else document).format(**slots) + ")")
    return f"COALESCE({' OR '.join(steps) or 'FALSE'}, FALSE)"


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
        whole_row = f"TO_JSON(STRUCT({alias}.*), {redact_json.SPARK_JSON_OPTIONS})"
        # Null members kept through the map, as the dbt package's row_json keeps them.
        return whole_row if not redact else redact_json.spark_row(whole_row, whole, inside)
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


def _key_path_macro(evaluator, value: exp.Expr, path: tuple, value_sql, build) -> exp.Expr:
    """A macro over a JSON value and a key path given as string literals: `build(value's SQL, keys,
    dialect)`, the value spelled by `value_sql`."""
    d = dialect_of(evaluator)
    return render(build(value_sql(value, d), [string_arg(k, "a JSON key") for k in path], d), d)


@macro()
def assay_json_extract_text(evaluator, value: exp.Expr, *path: str) -> exp.Expr:
    """The text at a key path inside a JSON column (`$.payload.a.b` -> ('a', 'b')), NULL when absent.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_extract_text(b.payload, 'customer', 'id')", "postgres")
    "JSON_EXTRACT_PATH_TEXT(CAST(b.payload AS JSON), 'customer', 'id')"
    """
    return _key_path_macro(evaluator, value, path, text, json_extract_sql)


@macro()
def assay_json_valid(evaluator, value: exp.Expr) -> exp.Expr:
    """Whether a value is a JSON document the engine reads: the guard of a JSON path read, NULL on NULL.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_valid(b.payload)", "duckdb").startswith("(JSON_VALID(CAST(b.payload AS TEXT)) AND NOT REGEXP_MATCHES(")
    True
    """
    d = dialect_of(evaluator)
    return render(json_valid_sql(as_text(value, d), d), d)


@macro()
def assay_json_path_blocked(evaluator, value: exp.Expr, *path: str) -> exp.Expr:
    """Whether a readable JSON document's shape stops a read of the key path (decision 1130): the
    document, or a value on the way, is a string, number, boolean or array; FALSE for a missing key,
    a JSON null and NULL. Ask it where `@assay_json_valid` holds.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_json_path_blocked(b.billed, 'amount')", "duckdb")
    "COALESCE((NOT JSON_TYPE(CAST(b.billed AS TEXT), '') IN ('OBJECT', 'NULL')), FALSE)"
    """
    return _key_path_macro(evaluator, value, path, as_text, json_path_blocked_sql)


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
