"""The per-target spelling interface: how one target writes what the lowering layer decided.

The lowering layer (fields, rules, staged) owns every decision about turning the IR into
relational logic; a target only says how to spell it, as sqlglot has one generator with a
subclass per dialect. What differs between targets is data where it can be (keyword case,
indent, the dialect authored expressions are re-spelled in, the validity column of a type-2
parent) and a small method otherwise (identifiers, literals, casts, package macro calls).

Templates handed to `sql` are written with lower-case keywords; a target with
`keyword_case = "upper"` upper-cases the keywords of the template text, never the
interpolated parts (identifiers, literals and macro calls are spelled already).
"""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass

from sqlglot import exp

from ..ir.model import BRONZE_ROW_ALIAS
from .reserved_words import RESERVED_WORDS

SIMPLE_IDENT = re.compile(r"[a-z_][a-z0-9_]*")  # with fullmatch: `$` would pass a trailing newline

# Every keyword and portable function name a lowering template writes; only these change case.
KEYWORDS = frozenset(
    """abs all and as asc by case coalesce count desc distinct else end exists false from group having in
    inner is join lag last left length lower max min not null nullif nulls on or order over partition
    right round row_number select split_part substr sum then trim true union upper when where
    with""".split()
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FORMATTER = string.Formatter()


def is_simple(name: str) -> bool:
    """A name every engine reads as written, unquoted."""
    return bool(SIMPLE_IDENT.fullmatch(name)) and name not in RESERVED_WORDS


@dataclass(frozen=True)
class Sql:
    """A macro argument that is SQL text (an expression), as opposed to a constant."""

    text: str


@dataclass(frozen=True)
class Raw:
    """A macro argument already spelled for the call (e.g. a list the target wrote itself)."""

    text: str


class Spelling:
    """How a target writes SQL. Subclasses set the data attributes and the few methods."""

    keyword_case = "lower"  # "lower" or "upper"
    indent = "    "
    # The dialect authored expressions (expression rules) are re-spelled in.
    # The column that is NULL on a type-2 parent's current version.
    valid_to_column = "valid_to"
    # The alias of the bronze row a reject's raw payload is read from: one no column the spec
    # names can shadow (validation reserves it).
    row_alias = BRONZE_ROW_ALIAS

    # -- keywords --------------------------------------------------------------------------
    def kw(self, word: str) -> str:
        """A keyword (or several) in this target's case."""
        return word.upper() if self.keyword_case == "upper" else word

    def sql(self, template: str, *args, **kwargs) -> str:
        """`template.format(...)` with the template's keywords in this target's case."""
        if self.keyword_case == "upper":
            parts = []
            for text, field, spec, conv in _FORMATTER.parse(template):
                parts.append(_WORD.sub(lambda m: m.group(0).upper() if m.group(0) in KEYWORDS else m.group(0), text).replace("{", "{{").replace("}", "}}"))
                if field is not None:
                    parts.append("{" + field + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}")
            template = "".join(parts)
        return template.format(*args, **kwargs)

    def join(self, word: str, items) -> str:
        """Items joined by a keyword, e.g. `and`."""
        return f" {self.kw(word)} ".join(items)

    # -- names and literals ----------------------------------------------------------------
    def ident(self, name: str) -> str:  # pragma: no cover - abstract
        """A column identifier: bare when every engine reads it as written, else quoted."""
        raise NotImplementedError

    def string(self, value: str) -> str:  # pragma: no cover - abstract
        """A SQL string literal."""
        raise NotImplementedError

    def literal(self, value) -> str:
        """A SQL literal: booleans and numbers bare, anything else a string."""
        if isinstance(value, bool):
            return self.kw("true" if value else "false")
        if isinstance(value, float) and not math.isfinite(value):
            # Python spells it `nan`/`inf`, a word SQL reads as a column; the loader refuses it
            # (decision 1153), so reaching here is assay's own mistake, not a spec's.
            raise ValueError(f"no SQL literal for the non-finite number {value!r}")
        if isinstance(value, (int, float)):
            return str(value)
        return self.string(str(value))

    # -- casts and package macros ----------------------------------------------------------
    def cast(self, expr: str, assay_type: str, safe: bool) -> str:  # pragma: no cover - abstract
        """A cast that yields NULL on failure (`safe`), or the engine's own raising cast."""
        raise NotImplementedError

    def call(self, macro: str, *args) -> str:  # pragma: no cover - abstract
        """A call of a package macro; `Sql` arguments are SQL text, `Raw` ones already spelled, `str` and `int` constants."""
        raise NotImplementedError

    def coercion_failed(self, before: str, after: str) -> str:
        """The coercion marker of one casting step, decided here for every target (issue 18): TRUE
        when there was a value and the cast made it NULL. Plain SQL every engine reads alike, so no
        target spells it again (the SQLMesh macro `@assay_coercion_failed` stays for users' own
        models, unused by generated ones)."""
        return self.sql("({} is not null and {} is null)", before, after)

    def json_extract_text(self, expr: str, keys) -> str:  # pragma: no cover - abstract
        """The text at a key path inside a JSON value."""
        raise NotImplementedError

    def json_valid(self, expr: str) -> str:  # pragma: no cover - abstract
        """TRUE when the text is a JSON document the engine's JSON reader accepts, FALSE when not,
        NULL on NULL (the guard of a JSON path read, decision 1123)."""
        raise NotImplementedError

    def json_path_blocked(self, expr: str, keys) -> str:  # pragma: no cover - abstract
        """TRUE when a readable JSON document's shape stops a read of the key path: the document,
        or the value at a proper prefix of the path, is a string, number, boolean or array; FALSE
        otherwise (a missing key, a JSON null) and on NULL (decision 1130)."""
        raise NotImplementedError

    def charset_ranges(self, ranges) -> str:  # pragma: no cover - abstract
        """The code-point ranges of a charset rule, spelled as the macro argument."""
        raise NotImplementedError

    def json_object(self, pairs) -> str:  # pragma: no cover - abstract
        """A JSON object text from (key, SQL value) pairs."""
        raise NotImplementedError

    def row_json(self, alias: str, redact) -> str:  # pragma: no cover - abstract
        """The whole row under `alias` as JSON text, the `redact` columns left out."""
        raise NotImplementedError

    def quality_flags(self, flags) -> str:  # pragma: no cover - abstract
        """The sorted names of the failed rules, from (rule name, boolean column) pairs."""
        raise NotImplementedError

    # -- relations -------------------------------------------------------------------------
    def bronze(self, source: str) -> str:  # pragma: no cover - abstract
        """The relation of a bronze source."""
        raise NotImplementedError

    def model(self, entity) -> str:  # pragma: no cover - abstract
        """The relation of an entity's model (what referential probes read)."""
        raise NotImplementedError

    def staged(self, entity) -> str:  # pragma: no cover - abstract
        """The relation of an entity's staged model (what the mart counts)."""
        raise NotImplementedError

    def counted_loads(self, entity, mappings, query: str, settled: bool = False) -> str:
        """Bronze's per-load counts of an incremental entity's `mappings` (`lower.loads.loads_query`,
        given as `query`), or with `settled` the loads of them the ledger held alike before this
        build wrote it, where a consumer reads them: by default the query itself; a target that
        counts them once per build reads them from there."""
        return query

    def run_id(self) -> str:  # pragma: no cover - abstract
        """The id of the current run, as text."""
        raise NotImplementedError

    def engine_sql(self, write) -> str:  # pragma: no cover - abstract
        """A query assay writes per engine (``write(dialect)`` gives its text for a sqlglot
        dialect: duckdb, postgres or spark), spelled so the engine that runs it reads its own."""
        raise NotImplementedError

    # -- authored expressions --------------------------------------------------------------
    def write_authored(self, tree: exp.Expression, dialect: str) -> str:
        """The text of a parsed authored expression in `dialect` (a target may first rewrite its
        literals). Called once per dialect `engine_sql` asks for."""
        return tree.sql(dialect=dialect)
