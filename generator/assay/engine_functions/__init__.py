"""The names each engine assay runs on can call, as data read from the engines themselves
(`scripts/engine_functions.py` writes `<catalog>.txt`; decision 1151).

An expression rule is written into the model in each engine's grammar by sqlglot, which spells
the functions it knows per engine and writes every other call as it is. sqlglot does not know
which engine lacks a function it knows (`year(d)` is written `YEAR(d)` for PostgreSQL, which has
no `year`), so validation reads the calls of each engine's text against that engine's catalog.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

#: The catalogs of each sqlglot dialect assay writes for: PostgreSQL 15 and 18 differ.
CATALOGS: dict[str, tuple[str, ...]] = {
    "duckdb": ("duckdb",),
    "postgres": ("postgres15", "postgres18"),
    "spark": ("spark",),
}
LABELS = {"duckdb": "DuckDB", "postgres15": "PostgreSQL 15", "postgres18": "PostgreSQL 18", "spark": "Spark"}


@lru_cache(maxsize=None)
def names(catalog: str) -> frozenset[str]:
    """The callable names of one catalog (lower case)."""
    text = resources.files(__name__).joinpath(f"{catalog}.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def every_name() -> frozenset[str]:
    """The names some engine assay runs on can call."""
    return frozenset().union(*(names(c) for cs in CATALOGS.values() for c in cs))


def calls(text: str, dialect: str) -> list[str]:
    """The names `text` (SQL in `dialect`) calls, lower case, sorted: a word followed by `(`
    (type names such as `decimal(10, 2)` and keywords such as `in (...)` are other tokens)."""
    from sqlglot.dialects.dialect import Dialect
    from sqlglot.tokens import TokenType

    tokens = Dialect.get_or_raise(dialect).tokenize(text)
    words = (TokenType.VAR, TokenType.LEFT, TokenType.RIGHT)
    return sorted({t.text.lower() for t, nxt in zip(tokens, tokens[1:])
                   if t.token_type in words and nxt.token_type == TokenType.L_PAREN})


def lacking(text: str, dialect: str) -> dict[str, list[str]]:
    """{catalog: the names `text` calls that it lacks} for the catalogs of `dialect` (none for a
    dialect assay holds no catalog of)."""
    called = calls(text, dialect)
    out = {}
    for catalog in CATALOGS.get(dialect, ()):
        missing = [n for n in called if n not in names(catalog)]
        if missing:
            out[catalog] = missing
    return out
