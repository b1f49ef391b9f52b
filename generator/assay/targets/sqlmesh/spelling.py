"""The SQLMesh spelling: SQL in the project's model dialect that calls the `assay_sqlmesh` macros.

Everything that differs between engines is a call to an `assay_sqlmesh` macro
(`@assay_try_cast`, `@assay_regex_matches`, ...), which renders for the engine at run time.
The lowering layer (assay.lower) decides what to write; this module only says how SQLMesh
spells it: identifiers and literals through sqlglot in the model dialect, so that they parse
back exactly, and upper-case keywords.
"""

from __future__ import annotations

from typing import Optional

from sqlglot import exp

from ...ir.model import Project
from ...lower.spelling import Raw, Spelling, Sql, is_simple
from . import jinja_safe, naming


class SqlmeshSpelling(Spelling):
    """Spelling bound to one model dialect (and, for relations, one project)."""

    keyword_case = "upper"
    indent = "  "
    valid_to_column = "valid_to"  # what assay's own SCD type 2 model writes

    def __init__(self, dialect: str = "duckdb", project: Optional[Project] = None) -> None:
        self.dialect = dialect
        self.project = project

    # -- names and literals -------------------------------------------------------------
    def qi(self, name: str) -> str:
        """A column identifier: bare when every engine reads it as written, else quoted."""
        return exp.to_identifier(name, quoted=not is_simple(name)).sql(dialect=self.dialect)

    ident = qi

    def string(self, value: str) -> str:
        return jinja_safe.literal(str(value)).sql(dialect=self.dialect)

    def prop(self, value: str) -> str:
        """A MODEL block property's text (owner, a description): one literal, as SQLMesh reads a
        property only so; its Jinja scan covers the query and statements, not the properties."""
        return exp.Literal.string(str(value)).sql(dialect=self.dialect)

    def write_authored(self, tree: exp.Expression, dialect: str) -> str:
        return jinja_safe.tree(tree).sql(dialect=dialect)

    def lit(self, value) -> str:
        """A SQL literal: booleans and numbers bare, anything else a string escaped for the dialect."""
        return self.literal(value)

    def table(self, schema: str, name: str) -> str:
        """A schema-qualified table name."""
        return exp.table_(name, db=schema).sql(dialect=self.dialect)

    # -- casts and macros -----------------------------------------------------------------
    def cast(self, expr: str, assay_type: str, safe: bool) -> str:
        macro = "try_cast" if safe else "cast"
        return self.call(macro, Sql(expr), assay_type)

    def _arg(self, arg) -> str:
        if isinstance(arg, (Sql, Raw)):
            return arg.text
        if isinstance(arg, int):
            return str(arg)
        return self.string(arg)

    def call(self, macro: str, *args) -> str:
        return f"@assay_{macro}(" + ", ".join(self._arg(a) for a in args) + ")"

    def json_extract_text(self, expr: str, keys) -> str:
        return self.call("json_extract_text", Sql(expr), *(str(k) for k in keys))

    def json_valid(self, expr: str) -> str:
        return self.call("json_valid", Sql(expr))

    def json_path_blocked(self, expr: str, keys) -> str:
        return self.call("json_path_blocked", Sql(expr), *(str(k) for k in keys))

    def charset_ranges(self, ranges) -> str:
        return self.string(",".join(f"U+{lo:04X}" if lo == hi else f"U+{lo:04X}-U+{hi:04X}" for lo, hi in ranges))

    def json_object(self, pairs) -> str:
        return self.call("json_object", *(Raw(f"({self.string(k)}, {v})") for k, v in pairs))

    def row_json(self, alias: str, redact) -> str:
        return self.call("row_json", Sql(alias), *(str(c) for c in redact))

    def quality_flags(self, flags) -> str:
        return self.call("quality_flags", *(Raw(f"({self.string(n)}, {c})") for n, c in flags))

    # -- relations ------------------------------------------------------------------------
    def bronze(self, source: str) -> str:
        return naming.bronze(self.project, source)

    def model(self, entity) -> str:
        return naming.entity_model(self.project, entity, self.dialect)

    def staged(self, entity) -> str:
        return naming.staged(self.project, entity)

    def run_id(self) -> str:
        return self.call("run_id")

    def engine_sql(self, write) -> str:
        # SQLMesh writes the model dialect's text for the engine itself.
        return write(self.dialect)
