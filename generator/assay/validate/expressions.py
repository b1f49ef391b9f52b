"""Expression rules: one boolean SQL expression over the entity's own columns."""

from __future__ import annotations

from typing import Optional

import sqlglot
from sqlglot import exp

from ..checks.sqlguard import refused_calls, refused_sigils
from ..parse_problem import parse_problem

_NOT_BOOLEAN = (exp.Literal, exp.Column, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Concat, exp.DPipe)


def parse_expression(text: str) -> tuple[Optional[exp.Expression], list[str]]:
    """Parse a rule expression; return the tree and the problems (sentences)."""
    try:
        statements = sqlglot.parse(text, read="duckdb")
    except sqlglot.errors.SqlglotError as exc:  # ParseError, and TokenError for an unclosed quote
        return None, [f"`{text}` is not a SQL expression ({parse_problem(exc)}); write one boolean expression such as `discount <= unit_price * quantity`."]
    statements = [s for s in statements if s is not None]
    if len(statements) != 1:
        return None, [f"`{text}` holds {len(statements)} statements; write one boolean expression."]
    tree = statements[0]
    problems = []
    if isinstance(tree, (exp.Select, exp.Union, exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Command)):
        return None, [f"`{text}` is a statement; write one boolean expression over the entity's columns, not a query."]
    if any(True for _ in tree.find_all(exp.Subquery, exp.Select)):
        problems.append(f"`{text}` holds a subquery; an expression rule reads only its own row. Use a `referential` rule or a `reconcile` check for other tables.")
    if any(True for _ in tree.find_all(exp.AggFunc)) or any(True for _ in tree.find_all(exp.Window)):
        problems.append(f"`{text}` aggregates or uses a window; an expression rule judges one row. Use a `reconcile` check for aggregates.")
    # The expression runs inside the build's own query with the build's credentials: a function
    # that reads host files, settings or the environment, writes state or runs SQL held in a
    # string is refused here exactly as in a check file (docs/security.md).
    only = "an expression rule judges the values of its own row"
    problems += [f"`{text}` {sentence}" for _line, sentence in refused_calls(tree, 0, only)]
    if any(True for _ in tree.find_all(exp.Struct, exp.Map, exp.VarMap)):
        problems.append(f"`{text}` holds a struct or map literal (`{{...}}`, DuckDB's syntax), which no column of a row "
                        "is compared with on every engine; write a comparison of the entity's columns with scalar values.")
    problems += [f"`{text}` {sentence}." for _line, sentence in refused_sigils(text, tree, 1)]
    if isinstance(tree, _NOT_BOOLEAN):
        problems.append(f"`{text}` is not a boolean expression; write a comparison or a test such as `amount >= 0` or `code IS NOT NULL`.")
    return tree, problems


def unknown_functions(tree: exp.Expression) -> list[str]:
    """Sentences for each function sqlglot does not know (an `Anonymous` call): it is written into
    the model as spelled, so a typo (`lenght`), or a function one engine has and another lacks
    (DuckDB's `strlen`), stops the build on that engine. A warning, not a refusal: the function may
    exist on the engine the project runs on."""
    from difflib import get_close_matches

    from sqlglot.dialects.duckdb import DuckDB

    names = sorted({f.name.lower() for f in tree.find_all(exp.Anonymous)})
    known = sorted(k.lower() for k in DuckDB.Parser.FUNCTIONS) if names else []
    out = []
    for name in names:
        near = get_close_matches(name, known, n=1, cutoff=0.8)
        hint = f" Did you mean `{near[0]}`?" if near else ""
        out.append(f"calls `{name}`, a function sqlglot does not know, so assay writes it as it is and cannot "
                   f"spell it for each engine: the build stops on an engine that has no `{name}`.{hint}")
    return out


def referenced_columns(tree: exp.Expression) -> list[str]:
    return sorted({c.name for c in tree.find_all(exp.Column) if not c.table})


def qualified_columns(tree: exp.Expression) -> list[str]:
    return sorted({c.sql() for c in tree.find_all(exp.Column) if c.table})
