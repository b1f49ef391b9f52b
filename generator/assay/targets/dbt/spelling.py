"""The dbt spelling: adapter-neutral Jinja SQL.

Everything that differs between engines is a call into the `assay` dbt package
(`assay.try_cast`, `assay.regex_matches`, ...), so one generated project runs on every
adapter the package dispatches to. The lowering layer (assay.lower) decides what to write;
this module only says how dbt spells it. The module-level helpers serve the nodes that are
dbt's own (outputs, mart, declared checks).
"""

from __future__ import annotations

import json
import re

from ...lower.spelling import Raw, Spelling, Sql, is_simple
from .naming import model_name, staged_name


def qi(name: str) -> str:
    """A column identifier: bare when every engine reads it as is, else quoted by the adapter."""
    if is_simple(name):
        return name
    return "{{ adapter.quote(" + jstr(name) + ") }}"


def qi_jinja(name: str) -> str:
    """The same identifier as a Jinja expression, for use inside `{% ... %}` code."""
    if is_simple(name):
        return jstr(name)
    return "adapter.quote(" + jstr(name) + ")"


def jstr(value: str) -> str:
    """A Jinja string literal (JSON escaping is valid Jinja)."""
    return json.dumps(value, ensure_ascii=False)


def jstr_list(items) -> str:
    """A Jinja list of string literals."""
    return "[" + ", ".join(jstr(str(i)) for i in items) + "]"


def sql_str(value: str) -> str:
    """A SQL string literal. Backslashes go through the package, which knows each engine's escaping."""
    if "\\" in value:
        return "{{ assay.string_literal(" + jstr(value) + ") }}"
    return "'" + value.replace("'", "''") + "'"


def call(macro: str, *args: str) -> str:
    """`{{ assay.<macro>(arg, ...) }}` where args are already Jinja expressions."""
    return "{{ assay." + macro + "(" + ", ".join(args) + ") }}"


def jexpr(sql: str) -> str:
    """A SQL fragment passed to a macro as a Jinja string; nested `{{ }}` become concatenations."""
    parts = re.split(r"(\{\{.*?\}\})", sql)
    out = []
    for p in parts:
        if not p:
            continue
        if p.startswith("{{") and p.endswith("}}"):
            out.append("(" + p[2:-2].strip() + ")")
        else:
            out.append(jstr(p))
    return " ~ ".join(out) if out else '""'


def sql_type(assay_type: str) -> str:
    """The engine's type for an assay type, as the package maps it."""
    return call("sql_type", jstr(assay_type))


class DbtSpelling(Spelling):
    """Lower-case keywords, adapter-quoted identifiers, `{{ assay.<macro>(...) }}` calls."""

    keyword_case = "lower"
    indent = "    "
    expression_dialect = "postgres"
    valid_to_column = "dbt_valid_to"  # what a dbt snapshot writes

    def ident(self, name: str) -> str:
        return qi(name)

    def string(self, value: str) -> str:
        return sql_str(value)

    def cast(self, expr: str, assay_type: str, safe: bool) -> str:
        if safe:
            return call("try_cast", jexpr(expr), jstr(assay_type))
        return f"cast({expr} as {sql_type(assay_type)})"

    def _arg(self, arg) -> str:
        if isinstance(arg, Sql):
            return jexpr(arg.text)
        if isinstance(arg, Raw):
            return arg.text
        if isinstance(arg, int):
            return str(arg)
        return jstr(arg)

    def call(self, macro: str, *args) -> str:
        return call(macro, *(self._arg(a) for a in args))

    def coercion_failed(self, before: str, after: str) -> str:
        return f"({before} is not null and {after} is null)"

    def json_extract_text(self, expr: str, keys) -> str:
        return call("json_extract_text", jexpr(expr), jstr_list(keys))

    def charset_ranges(self, ranges) -> str:
        return "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in ranges) + "]"

    def json_object(self, pairs) -> str:
        return call("json_object", "[" + ", ".join(f"[{jstr(k)}, {jexpr(v)}]" for k, v in pairs) + "]")

    def row_json(self, alias: str, redact) -> str:
        return call("row_json", jstr(alias), jstr_list(redact))

    def quality_flags(self, flags) -> str:
        return call("quality_flags", "[" + ", ".join(f"[{jstr(n)}, {jstr(c)}]" for n, c in flags) + "]")

    def bronze(self, source: str) -> str:
        return "{{ source('bronze', " + jstr(source) + ") }}"

    def model(self, entity) -> str:
        return "{{ ref(" + jstr(model_name(entity)) + ") }}"

    def staged(self, entity) -> str:
        return "{{ ref(" + jstr(staged_name(entity)) + ") }}"

    def run_id(self) -> str:
        return self.cast(call("string_literal", "invocation_id"), "string", False)


DBT = DbtSpelling()
