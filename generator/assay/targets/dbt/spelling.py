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

from sqlglot import exp
from sqlglot.errors import ErrorLevel

from ...identifiers import unused_marker
from ...lower.spelling import Raw, Spelling, Sql, is_simple
from .naming import loads_name, model_name, staged_name

#: dbt adapter name -> the sqlglot dialect a query assay writes per engine is spelled in
#: (`engine_sql`): the engines the package dispatches to (assay.engine_types).
ADAPTER_DIALECTS = {"bigquery": "bigquery", "databricks": "databricks", "duckdb": "duckdb", "postgres": "postgres",
                    "redshift": "redshift", "snowflake": "snowflake", "spark": "spark", "trino": "trino"}


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


# A `{` that would open a Jinja block together with the next character.
_JINJA_OPENER = re.compile(r"\{(?=[{%#])")


def inert(text: str) -> str:
    """`text` as template text dbt renders back to exactly `text`, never running any of it.

    dbt renders Jinja in model SQL, in SQL comments and in YAML properties, and Jinja only
    starts a block at `{{`, `{%` or `{#`. Every `{` that would start one is written as the Jinja
    expression `{{ "{" }}`, which prints one `{`; the character after it then starts nothing,
    so spec text (values, file names, descriptions) stays data (issue 21, decision 0901).
    """
    return _JINJA_OPENER.sub('{{ "{" }}', text)


def sql_str(value: str) -> str:
    """A SQL string literal, inert under Jinja. Backslashes go through the package, which knows
    each engine's escaping; the value then travels as a Jinja string, which is data too."""
    if "\\" in value:
        return "{{ assay.string_literal(" + jstr(value) + ") }}"
    return inert("'" + value.replace("'", "''") + "'")


def _marked(tree, prefix: str, kind, text_of) -> dict[str, str]:
    """Replace (in place) every node of `kind` for which `text_of(node)` gives a text by a marker
    column the SQL does not hold; {marker: text}. The caller writes each text after sqlglot has
    spelled the tree, where sqlglot's PostgreSQL spelling would be wrong on another engine."""
    marker = unused_marker(prefix, tree.sql())
    marked: dict[str, str] = {}
    for node in list(tree.find_all(kind)):
        text = text_of(node)
        if text is not None:
            name = f"{marker}_{len(marked)}_"
            marked[name] = text
            node.replace(exp.column(name))
    return marked


def escaped_literals(tree, prefix: str = "assay_escaped_literal") -> dict[str, str]:
    """Every string literal of `tree` that holds a backslash, marked (`_marked`): sqlglot's
    PostgreSQL spelling keeps a backslash bare, which Spark reads as an escape: `'a\\'' or ...'`
    would end the literal early there and run its rest as SQL. The caller writes each value through
    `assay.string_literal`, which escapes it for the engine (decision 0972)."""
    return _marked(tree, prefix, exp.Literal,
                   lambda node: node.this if node.is_string and "\\" in node.this else None)


def quoted_columns(tree) -> dict[str, str]:
    """Every column of `tree` that must be quoted (a reserved word such as `value`), marked
    (`_marked`): PostgreSQL's spelling quotes it `"value"`, which Spark reads as a string literal,
    so the rule compared text and never fired there (an outside tester, session 36). The caller
    writes each through `qi`, the adapter's own quoting, as every other identifier of the model."""
    return _marked(tree, "assay_quoted_column", exp.Column,
                   lambda node: node.name if not node.table and node.this.args.get("quoted") else None)


def call(macro: str, *args: str) -> str:
    """`{{ assay.<macro>(arg, ...) }}` where args are already Jinja expressions."""
    return "{{ assay." + macro + "(" + ", ".join(args) + ") }}"


# A Jinja string literal inside an expression (what `jstr` writes, or a quoted name).
_JINJA_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'', re.S)


def jinja_blocks(sql: str):
    """`sql` cut into (is_expression, text) pieces at the `{{ ... }}` blocks assay wrote.

    A block ends at the `}}` that closes it the way Jinja's own lexer ends it: outside string
    literals and outside nested `{...}` (a dict argument). Spec text outside blocks never holds
    `{{` (`inert`), and inside a block it only appears within a string literal, so a value
    such as `a}}b` cannot end a block early or open one.
    """
    pieces, pos, n = [], 0, len(sql)
    while pos < n:
        start = sql.find("{{", pos)
        if start < 0:
            pieces.append((False, sql[pos:]))
            break
        if start > pos:
            pieces.append((False, sql[pos:start]))
        i, depth = start + 2, 0
        while i < n:
            ch = sql[i]
            if ch in "\"'":
                m = _JINJA_STRING.match(sql, i)
                if m is None:
                    raise ValueError(f"unterminated Jinja string in {sql!r}")
                i = m.end()
                continue
            if ch == "}" and depth == 0 and sql.startswith("}}", i):
                break
            depth += {"{": 1, "}": -1}.get(ch, 0)
            i += 1
        else:
            raise ValueError(f"unclosed Jinja block in {sql!r}")
        pieces.append((True, sql[start + 2:i].strip()))
        pos = i + 2
    return pieces


def jexpr(sql: str) -> str:
    """A SQL fragment passed to a macro as a Jinja string; nested `{{ }}` become concatenations."""
    out = [f"({text})" if is_expr else jstr(text) for is_expr, text in jinja_blocks(sql) if text]
    return " ~ ".join(out) if out else '""'


def sql_type(assay_type: str) -> str:
    """The engine's type for an assay type, as the package maps it."""
    return call("sql_type", jstr(assay_type))


class DbtSpelling(Spelling):
    """Lower-case keywords, adapter-quoted identifiers, `{{ assay.<macro>(...) }}` calls."""

    keyword_case = "lower"
    indent = "    "
    valid_to_column = "dbt_valid_to"  # what a dbt snapshot writes

    def ident(self, name: str) -> str:
        return qi(name)

    def string(self, value: str) -> str:
        return sql_str(value)

    def write_authored(self, tree, dialect: str) -> str:
        """An authored expression; its string literals are spec text, so the whole is made inert
        (sqlglot writes `{` nowhere else: names are validated identifiers), and a literal holding
        a backslash is written by `sql_str`, as every other value is (`escaped_literals`)."""
        tree = tree.copy()  # written once per dialect: the markers replace nodes in place
        escaped = escaped_literals(tree)
        quoted = quoted_columns(tree)
        out = inert(tree.sql(dialect=dialect, unsupported_level=ErrorLevel.IGNORE))
        for name, value in escaped.items():
            out = out.replace(name, sql_str(value))
        for name, column in quoted.items():
            out = out.replace(name, qi(column))
        return out

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

    def json_extract_text(self, expr: str, keys) -> str:
        return call("json_extract_text", jexpr(expr), jstr_list(keys))

    def json_valid(self, expr: str) -> str:
        return call("json_valid", jexpr(expr))

    def json_path_blocked(self, expr: str, keys) -> str:
        return call("json_path_blocked", jexpr(expr), jstr_list(keys))

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

    def counted_loads(self, entity, mappings, query: str, settled: bool = False) -> str:
        """The loads model's rows (decision 0411) when this invocation built it; otherwise, e.g.
        a selection without it, the query itself: a model left from an earlier build may be older
        than bronze, and a load it did not count would be skipped."""
        name = jstr(loads_name(entity))
        where = (["_settled"] if settled else []) + ([] if mappings == entity.mappings else [
            "_mapping in (" + ", ".join(self.string(m.name) for m in mappings) + ")"])
        columns = "_mapping, _load_id" if settled else "_mapping, _load_id, _rows, _fp"
        return "\n".join([
            "{% if assay.built_this_run(" + name + ") %}",
            self.indent + f"select {columns} from {{{{ ref({name}) }}}}" + "".join(
                f" {'where' if n == 0 else 'and'} {w}" for n, w in enumerate(where)),
            "{% else %}",
            query,
            "{% endif %}",
        ])

    def run_id(self) -> str:
        return self.cast(call("string_literal", "invocation_id"), "string", False)

    def engine_sql(self, write) -> str:
        # One generated project runs on every adapter: the text is chosen when dbt renders it,
        # by dbt's adapter name, one branch per text (adapters whose engines read the same text
        # share it, and a text every engine reads is written alone); another adapter is refused
        # with the reason rather than handed another engine's SQL.
        texts: dict[str, list[str]] = {}
        for adapter, dialect in sorted(ADAPTER_DIALECTS.items()):
            texts.setdefault(write(dialect), []).append(adapter)
        if len(texts) == 1:
            return next(iter(texts))
        branches = []
        for n, (text, adapters) in enumerate(texts.items()):
            test = (f"target.type == {jstr(adapters[0])}" if len(adapters) == 1
                    else f"target.type in ({', '.join(jstr(a) for a in adapters)})")
            branches.append(("{% if " if n == 0 else "{% elif ") + test + " %}\n" + text)
        names = ", ".join(sorted(ADAPTER_DIALECTS))
        refuse = ("{{ exceptions.raise_compiler_error('assay writes this query for the adapters " + names
                  + "; target type ' ~ target.type ~ ' has none') }}")
        return "\n".join(branches) + "\n{% else %}" + refuse + "{% endif %}"


DBT = DbtSpelling()
