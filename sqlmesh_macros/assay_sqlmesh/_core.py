"""What every assay macro shares: which engine it renders for, its type names, and SQL templates.

Per-engine behaviour lives in tables (`TYPE_NAMES`, the `*_TEMPLATES` dicts of the
macro modules) keyed by sqlglot dialect name, the way sqlglot keeps one generator
per dialect. A macro renders for the engine the model runs on: the engine
adapter SQLMesh hands the evaluator at run time, or the evaluator's dialect when
there is none (loading a project, `MacroEvaluator` in a test). Templates are
written in the engine's own SQL and parsed with that dialect, so what reaches
the engine is what the template says.
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from typing import Any, Optional

from sqlglot import exp, parse_one

# Dialects a macro knows by name; anything else falls back to `default` templates.
KNOWN = ("bigquery", "databricks", "duckdb", "postgres", "redshift", "snowflake", "spark", "trino")
# Where an engine borrows another's SQL (dbt's dispatch order: Databricks is Spark, Redshift
# speaks Postgres until a template says otherwise).
INHERITS = {"databricks": "spark", "redshift": "postgres"}

# Logical assay type -> engine type name: one table for every writer (assay.engine_types).
from assay.engine_types import DECIMAL_NAMES, TYPE_NAMES, decimal_name  # noqa: E402,F401

# Column names that need quoting on at least one engine (DuckDB's and PostgreSQL's reserved
# words). The generator passes identifiers already quoted where needed, and the macros keep that
# quoting; this list only serves column names given as strings. It is the one list the
# generator uses too, a data-only module with no imports.
from assay.lower.reserved_words import RESERVED_WORDS as RESERVED  # noqa: E402
_SIMPLE_IDENT = re.compile(r"^[a-z_][a-z0-9_]*$")
# The JSON escape of U+0000 (after an even run of backslashes): PostgreSQL's jsonb refuses a
# document holding it, DuckDB and Spark read it; no engine does now (decision 1123, amended in session 33).
JSON_NUL_ESCAPE = r"(^|[^\\])(\\\\)*\\u0000"
_DECIMAL = re.compile(r"^decimal\((\d+),(\d+)\)$")
SIMPLE_KINDS = ("string", "int", "bool", "date", "timestamp", "variant")


class AssayMacroError(ValueError):
    """A macro was called with arguments it cannot render; raised at load time, not at run time."""


# The PostgreSQL server version the macro being expanded renders for (see dialect_of).
_PG_VERSION: ContextVar[int] = ContextVar("assay_postgres_version_num", default=160000)
_SERVER_VERSIONS: dict = {}


def dialect_of(evaluator: Any) -> str:
    """The engine a macro renders for: the run's engine adapter, else the evaluator's dialect.

    Every macro calls this first; on Postgres it also settles the server version the rendering
    targets (postgres_version()).
    """
    adapter = getattr(evaluator, "locals", {}).get("engine_adapter")
    name = getattr(adapter, "dialect", None) or getattr(evaluator, "dialect", None) or "duckdb"
    # A dialect string may carry settings ("duckdb, normalization_strategy=...").
    dialect = str(name).split(",")[0].strip().lower() or "duckdb"
    if dialect == "postgres":
        _PG_VERSION.set(_server_version(evaluator, adapter))
    return dialect


def _server_version(evaluator: Any, adapter: Any) -> int:
    """The server decides which cast guard exists (pg_input_is_valid is 16+), so it is read from
    the connection the run uses, once per connection. The SQLMesh variable
    `assay_postgres_version_num` pins it (rendering without a database); else 16+ is assumed."""
    try:
        pinned = evaluator.var("assay_postgres_version_num")
    except Exception:  # pragma: no cover - evaluators without variables
        pinned = None
    if pinned is not None:
        return int(pinned)
    if adapter is None or getattr(adapter, "dialect", None) != "postgres":
        return 160000
    key = id(getattr(adapter, "_connection_pool", adapter))
    if key not in _SERVER_VERSIONS:
        row = adapter.fetchone("SELECT CAST(current_setting('server_version_num') AS INT)")
        _SERVER_VERSIONS[key] = int(row[0])
    return _SERVER_VERSIONS[key]


def postgres_version() -> int:
    """The server version of the Postgres rendering in progress (160000 outside one)."""
    return _PG_VERSION.get()


def pick(table: dict, dialect: str) -> Any:
    """The entry of a per-dialect table for `dialect`, following INHERITS, else `default`."""
    d: Optional[str] = dialect
    while d is not None:
        if d in table:
            return table[d]
        d = INHERITS.get(d)
    return table["default"]


def parse_type(assay_type: str) -> tuple[str, Optional[int], Optional[int]]:
    """`decimal(12, 2)` -> ("decimal", 12, 2); a simple kind -> (kind, None, None)."""
    t = str(assay_type).lower().replace(" ", "")
    if t in SIMPLE_KINDS:
        return t, None, None
    m = _DECIMAL.match(t)
    if m and int(m.group(2)) <= int(m.group(1)) and 1 <= int(m.group(1)) <= 38:
        return "decimal", int(m.group(1)), int(m.group(2))
    # A typo in a spec must fail at load time rather than as engine-specific SQL noise.
    raise AssayMacroError(f"assay: unknown logical type '{assay_type}'")


def type_name(assay_type: str, dialect: str) -> str:
    """The engine type name for a logical assay type, as the engine spells it."""
    kind, p, s = parse_type(assay_type)
    if kind == "decimal":
        return decimal_name(dialect, p, s, INHERITS)
    return pick(TYPE_NAMES, dialect)[kind]


def data_type(assay_type: str, dialect: str) -> exp.DataType:
    return exp.DataType.build(type_name(assay_type, dialect), dialect=dialect)


def lit(value: Any, dialect: str) -> str:
    """A SQL literal for a Python value, escaped the way the engine reads literals."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    return exp.Literal.string(str(value)).sql(dialect=dialect)


def text(value: Any, dialect: str) -> str:
    """SQL text of an argument: an expression in the engine's dialect, or a raw fragment."""
    if isinstance(value, exp.Expr):
        return value.sql(dialect=dialect)
    return str(value)


def render(template: str, dialect: str, **parts: Any) -> exp.Expr:
    """Fill `{name}` slots with SQL text and parse the result in the engine's dialect."""
    # Without parts the template is finished SQL, whose regex braces must not be read as slots.
    filled = template.format(**{k: text(v, dialect) for k, v in parts.items()}) if parts else template
    return parse_one(filled, read=dialect)


def as_text(value: Any, dialect: str) -> str:
    """`CAST(value AS <string type>)` as SQL text (a value already cast to text is kept as is)."""
    if isinstance(value, exp.Cast) and value.to.is_type(*exp.DataType.TEXT_TYPES):
        return text(value, dialect)
    return f"CAST({text(value, dialect)} AS {type_name('string', dialect)})"


def column_sql(name: str, dialect: str) -> str:
    """A column identifier: bare when every engine reads it as written, else quoted."""
    quoted = not _SIMPLE_IDENT.match(name) or name in RESERVED
    return exp.to_identifier(name, quoted=quoted).sql(dialect=dialect)


def literal_text(value: Any) -> Optional[str]:
    """The text of a string literal argument, or None when it is none. The generator writes a
    text holding a Jinja opener (`{{`, `{%`, `{#`) as a parenthesised concatenation of literals,
    so SQLMesh's Jinja scan of the model can parse it (assay.targets.sqlmesh.jinja_safe): that is
    folded back here."""
    if isinstance(value, exp.Paren):
        return literal_text(value.this)
    if isinstance(value, exp.DPipe):
        left, right = literal_text(value.this), literal_text(value.expression)
        return None if left is None or right is None else left + right
    if isinstance(value, exp.Literal) and value.is_string:
        return value.this
    return None


def string_arg(value: Any, what: str) -> str:
    """A macro argument that must be a literal text (a rule name, a pattern, a format)."""
    if isinstance(value, str):
        return value
    folded = literal_text(value)
    if folded is not None:
        return folded
    raise AssayMacroError(f"assay: {what} must be a string literal, got {value!r}")
