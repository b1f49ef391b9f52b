"""The one rule for names: what an identifier may be, and how every engine quotes one.

Every name that reaches SQL (schemas, tables, columns, grantees, check columns, bronze
relations and their columns) is checked against `IDENTIFIER_PATTERN` by validation, which
refuses any other with file:line, and is quoted with `quote_identifier` wherever it is
spliced into SQL, generated or run. Quoting is a second wall, not the first: a validated
name never holds a quote character, but a name read from data (a CSV header, the
information_schema) has not been validated, and the helper escapes its quote character so
such a name stays one identifier whatever it holds.

The pattern is ASCII on purpose (decision 0900): dbt accepts non-ASCII letters, but SQLMesh
writes unquoted names through sqlglot and fails on them, so only what both targets and all
engines read the same way is admitted. 63 characters is PostgreSQL's limit; a longer name
is truncated there and would silently name another relation.
"""

from __future__ import annotations

import re

# PostgreSQL's limit on a name's length: a longer one is cut there and names another relation.
MAX_IDENTIFIER = 63
# Letters, digits and `_`, not starting with a digit, at most MAX_IDENTIFIER characters.
IDENTIFIER_PATTERN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,%d}" % (MAX_IDENTIFIER - 1))

# What a name may hold, as refusals say it ("...; write {IDENTIFIER_RULE}.").
IDENTIFIER_RULE = "ASCII letters, digits and `_`, starting with a letter or `_`, at most 63 characters"

# The quote character of each engine's delimited identifiers; a quote inside the name is doubled.
_QUOTE_CHARACTER = {"duckdb": '"', "postgres": '"', "spark": "`"}


def is_identifier(name: object) -> bool:
    """True when `name` is a string matching `IDENTIFIER_PATTERN` in whole.

    `fullmatch`, not `match` with `$`: `$` also matches before a trailing newline, so
    `"orders\\n"` would pass a `re.match(r"...$")` check.
    """
    return isinstance(name, str) and IDENTIFIER_PATTERN.fullmatch(name) is not None


def quote_identifier(name: str, dialect: str) -> str:
    """`name` as one delimited identifier of `dialect` (duckdb, postgres or spark).

    The engine's quote character inside the name is doubled, which every one of these
    engines reads back as one literal quote, so any text stays a single identifier.
    """
    try:
        quote = _QUOTE_CHARACTER[dialect]
    except KeyError:
        raise ValueError(f"no identifier quoting for dialect {dialect!r}; expected one of {sorted(_QUOTE_CHARACTER)}") from None
    return quote + name.replace(quote, quote + quote) + quote


def quote_relation(dialect: str, *parts: str) -> str:
    """A dotted relation name (`schema.table`, `schema.table.column`), each part quoted."""
    return ".".join(quote_identifier(part, dialect) for part in parts)


def unused_marker(base: str, text: str) -> str:
    """`base`, lengthened with `_` until neither it nor any case of it occurs in `text`: a name a
    generator can put into authored SQL and later replace by text search without touching any of
    the author's own text (a literal or a name that happens to spell the marker)."""
    marker, folded = base, text.lower()
    while marker.lower() in folded:
        marker += "_"
    return marker
