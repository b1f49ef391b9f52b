"""The engine type name of each logical assay type, per engine: ONE table (issue 18).

The SQLMesh macros (`assay_sqlmesh._core.type_name`) and assay's own writers (the events table
`assay maintain` creates) read it here; the dbt package's `sql_type` macros spell the same
names in Jinja, and tests/dbt_package/test_engine_types.py renders them for every engine and
every type and holds them equal to this table. Keyed by sqlglot dialect name; an engine without
an entry of its own takes `default` (the SQLMesh macros follow `INHERITS` first).
"""

from __future__ import annotations

SIMPLE_TYPES = ("string", "int", "bool", "date", "timestamp", "variant")

# Logical assay type -> engine type name. Decimals are formatted with `DECIMAL_NAMES`.
TYPE_NAMES: dict[str, dict[str, str]] = {
    "default": {"string": "VARCHAR", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "variant": "VARCHAR"},
    "duckdb": {"string": "VARCHAR", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "variant": "JSON"},
    # jsonb, not json: json has no equality operator, so DISTINCT / GROUP BY would fail.
    "postgres": {"string": "TEXT", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "variant": "JSONB"},
    # A bare VARCHAR is VARCHAR(256) on Redshift and would truncate.
    "redshift": {"string": "VARCHAR(65535)", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "variant": "SUPER"},
    "snowflake": {"string": "VARCHAR", "int": "NUMBER(19, 0)", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP_NTZ", "variant": "VARIANT"},
    # DATETIME is BigQuery's zoneless type; JSON cannot be grouped or compared, so variant is text.
    "bigquery": {"string": "STRING", "int": "INT64", "bool": "BOOL", "date": "DATE", "timestamp": "DATETIME", "variant": "STRING"},
    "spark": {"string": "STRING", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP", "variant": "STRING"},
    # Trino's bare timestamp is millisecond precision; the others keep microseconds.
    "trino": {"string": "VARCHAR", "int": "BIGINT", "bool": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP(6)", "variant": "JSON"},
}
DECIMAL_NAMES = {"default": "DECIMAL", "postgres": "NUMERIC", "redshift": "DECIMAL", "snowflake": "NUMBER"}


def decimal_name(dialect: str, precision: int, scale: int, inherits: dict[str, str] | None = None) -> str:
    """`decimal(p,s)` as `dialect` spells it, e.g. `NUMERIC(12, 2)`."""
    if dialect == "bigquery":
        # NUMERIC holds at most 29 integer and 9 fraction digits.
        return f"{'NUMERIC' if (scale <= 9 and precision - scale <= 29) else 'BIGNUMERIC'}({precision}, {scale})"
    d = dialect
    while d is not None and d not in DECIMAL_NAMES:
        d = (inherits or {}).get(d)
    return f"{DECIMAL_NAMES[d or 'default']}({precision}, {scale})"


# The SQL types an authored expression may cast to (sqlglot's names), as assay types.
_AUTHORED_TYPES = {
    "TINYINT": "int", "SMALLINT": "int", "INT": "int", "BIGINT": "int",
    "VARCHAR": "string", "TEXT": "string", "CHAR": "string", "NVARCHAR": "string", "NCHAR": "string",
    "BOOLEAN": "bool", "DATE": "date", "TIMESTAMP": "timestamp", "TIMESTAMPNTZ": "timestamp", "DATETIME": "timestamp",
    "JSON": "variant",
}


def assay_type_of(datatype) -> str | None:
    """The assay type a cast of an authored expression names (a sqlglot `DataType`), or None when
    assay has no portable cast to it (a float, a zoned timestamp, a decimal without its precision).
    Every integer width reads as assay's `int` (64 bits): the question an expression asks of a
    text is whether it holds an integer, the same on every engine."""
    name = datatype.this.name
    if name == "DECIMAL":
        params = [p.this for p in datatype.expressions]
        if len(params) == 2 and all(getattr(p, "is_int", False) for p in params):
            return f"decimal({int(params[0].this)},{int(params[1].this)})"
        return None
    return _AUTHORED_TYPES.get(name)
