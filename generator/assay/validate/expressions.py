"""Expression rules: one boolean SQL expression over the entity's own columns."""

from __future__ import annotations

from typing import Optional

import sqlglot
from sqlglot import exp

from ..checks.sqlguard import refused_calls, refused_sigils
from ..engine_types import assay_type_of
from ..lower.authored import REGEX_MATCHES
from ..parse_problem import parse_problem

_NOT_BOOLEAN = (exp.Literal, exp.Column, exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Concat, exp.DPipe)


def _keyword_hint(text: str) -> str:
    """A hint when the text uses a SQL keyword as a bare word: a column named `from` or `to` is
    written in double quotes (an outside tester, session 45, got no hint for `from <= to`)."""
    from sqlglot.dialects.duckdb import DuckDB

    try:
        tokens = DuckDB().tokenize(text)
    except sqlglot.errors.SqlglotError:
        return ""
    keywords = DuckDB.Tokenizer.KEYWORDS
    words = sorted({t.text.lower() for t in tokens if t.text.isidentifier() and t.text.upper() in keywords
                    and t.token_type.name not in ("VAR", "AND", "OR", "NOT", "NULL", "TRUE", "FALSE", "IS", "IN", "LIKE",
                                                  "BETWEEN", "CASE", "WHEN", "THEN", "ELSE", "END", "CAST", "TRY_CAST")})
    if not words:
        return ""
    shown = ", ".join(f"`{w}`" for w in words)
    return f" {shown} {'is a SQL keyword' if len(words) == 1 else 'are SQL keywords'}: a column so named is written in double quotes (`\"{words[0]}\"`)."


def parse_expression(text: str) -> tuple[Optional[exp.Expression], list[str]]:
    """Parse a rule expression; return the tree and the problems (sentences)."""
    try:
        statements = sqlglot.parse(text, read="duckdb")
    except sqlglot.errors.SqlglotError as exc:  # ParseError, and TokenError for an unclosed quote
        return None, [f"`{text}` is not a SQL expression ({parse_problem(exc)}); write one boolean expression such as "
                      f"`discount <= unit_price * quantity`.{_keyword_hint(text)}"]
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
    problems += [f"`{text}` {sentence}" for sentence in regex_problems(tree)]
    # assay spells a try-cast per engine only to its own types; sqlglot writes any other as a plain
    # CAST where the engine has no try-cast (PostgreSQL), which raises on the value (decision 1146).
    for node in tree.find_all(exp.TryCast):
        if assay_type_of(node.to) is None:
            problems.append(f"`{text}` tries a cast to {node.to.sql(dialect='duckdb')}, which not every engine can try; "
                            "write try_cast to int, decimal(p,s), varchar, boolean, date, timestamp or json.")
    if isinstance(tree, _NOT_BOOLEAN):
        problems.append(f"`{text}` is not a boolean expression; write a comparison or a test such as `amount >= 0` or `code IS NOT NULL`.")
    return tree, problems


#: Regex calls the engines do not agree on: PostgreSQL has no regexp_extract, Spark's
#: regexp_replace replaces every match where DuckDB's and PostgreSQL's replace the first, and
#: DuckDB's SIMILAR TO is a regex where PostgreSQL's is SQL's own wildcard syntax.
_REGEX_DIVERGENT = (exp.RegexpCount, exp.RegexpExtract, exp.RegexpExtractAll, exp.RegexpILike, exp.RegexpInstr,
                    exp.RegexpReplace, exp.RegexpSplit, exp.SimilarTo, exp.Glob)


def regex_problems(tree: exp.Expression) -> list[str]:
    """Sentences for the regex calls of an expression that would not judge alike on every engine
    (decision 1147). A match's pattern is a literal in the portable subset a `pattern` rule
    speaks (RE2, POSIX and Java regexes disagree beyond it), without flags, which sqlglot drops."""
    out = []
    for node in tree.find_all(*_REGEX_DIVERGENT):
        out.append(f"calls {node.sql(dialect='duckdb')}, which the engines do not judge alike; test a value with "
                   "`regexp_matches(column, 'regex')` (a search) or `column ~ 'regex'` (the whole value), or write "
                   "a `pattern` rule.")
    for node in tree.find_all(*REGEX_MATCHES):
        pattern = node.expression
        if node.args.get("flag") is not None:
            out.append(f"calls {node.sql(dialect='duckdb')} with options, which not every engine keeps; write "
                       "the pattern alone (for a case-insensitive match, compare `lower(column)`).")
        elif not (isinstance(pattern, exp.Literal) and pattern.is_string):
            out.append(f"calls {node.sql(dialect='duckdb')} with a pattern that is not a quoted literal; a "
                       "pattern built from values cannot be checked to mean the same on every engine.")
        else:
            from ..spec.pattern import check_pattern

            out += [f"calls {node.sql(dialect='duckdb')}: {sentence}" for sentence in check_pattern(pattern.this, anchored=False)]
    return out


def unknown_functions(text: str) -> list[str]:
    """Sentences for each name an expression calls that no engine assay runs on has (its catalogs,
    decision 1151): a typo (`lenght`) stops the build everywhere. A warning, not a refusal: the
    database may define it (a UDF, an extension). A name only some engines lack is said per target
    (validate/targets.py)."""
    from difflib import get_close_matches

    from ..engine_functions import calls, every_name
    from ..lower.authored import engine_text

    known = every_name()
    out = []
    for name in calls(engine_text(text, "duckdb"), "duckdb"):
        if name in known:
            continue
        near = get_close_matches(name, sorted(known), n=1, cutoff=0.8)
        hint = f" Did you mean `{near[0]}`?" if near else ""
        out.append(f"calls `{name}`, which no engine assay runs on has (DuckDB, PostgreSQL 15 and 18, Spark): "
                   f"the build stops unless the database defines it.{hint}")
    return out


def referenced_columns(tree: exp.Expression) -> list[str]:
    return sorted({c.name for c in tree.find_all(exp.Column) if not c.table})


def qualified_columns(tree: exp.Expression) -> list[str]:
    return sorted({c.sql() for c in tree.find_all(exp.Column) if c.table})


# The classes of value an expression compares, by the field's declared type; a class missing here
# (variant) is not judged.
_CLASS = {"string": "text", "int": "number", "bool": "boolean", "date": "date", "timestamp": "timestamp"}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.NullSafeNEQ)
_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)
_BOOLEAN_TEXT = {"true", "false", "t", "f"}


def value_class(assay_type: str) -> Optional[str]:
    """The class of value a field of `assay_type` holds in an expression (None: not judged)."""
    return "number" if assay_type.startswith("decimal") else _CLASS.get(assay_type)


def _operand(node: exp.Expression, classes: dict) -> Optional[tuple[str, str, Optional[str]]]:
    """(class, how the sentence names it, literal text or None) of a column or a literal; None
    for anything else (a call, a cast, an expression: not judged)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return "number", f"the number `{node.sql()}`", None
    if isinstance(node, exp.Column) and not node.table and node.name in classes:
        cls = classes[node.name]
        return cls, f"{cls} `{node.name}`", None
    if isinstance(node, exp.Literal):
        if node.is_string:
            return "literal text", f"the text '{node.this}'", node.this
        return "number", f"the number `{node.this}`", None
    if isinstance(node, exp.Boolean):
        return "boolean", f"`{node.sql()}`", None
    return None


def _reads_as(text: str, cls: str) -> bool:
    """Whether every engine reads a quoted literal as a value of `cls` (PostgreSQL and DuckDB coerce
    an untyped literal to the column's type; text that is no such value stops the build)."""
    import datetime as _dt
    from decimal import Decimal, InvalidOperation

    t = text.strip()
    try:
        if cls == "number":
            Decimal(t)
            return t.lower() not in ("nan", "inf", "-inf", "infinity", "-infinity")
        if cls in ("date", "timestamp"):  # a date compared with a timestamp's text is read as one too
            _dt.datetime.fromisoformat(t)
            return True
    except (ValueError, InvalidOperation):
        return False
    if cls == "boolean":
        return t.lower() in _BOOLEAN_TEXT
    return True


def _pair_problem(a: tuple, b: tuple) -> Optional[str]:
    (ca, na, _ta), (cb, nb, tb) = a, b
    if ca == "literal text" and cb == "literal text":
        return None
    if cb == "literal text":
        if ca == "text" or _reads_as(tb, ca):
            return None
        return f"compares {na} with {nb} (no {ca})"
    if ca == "literal text":
        return _pair_problem(b, a)
    if ca == cb or {ca, cb} <= {"date", "timestamp"}:
        return None
    return f"compares {na} with {nb}"


def type_mismatches(tree: exp.Expression, types: dict[str, str]) -> list[str]:
    """Sentences for each comparison or arithmetic the engines disagree on or refuse: a text field
    compared with a number (DuckDB casts the text and stops on the first value that is no number,
    PostgreSQL refuses the query, Spark compares as numbers), a number, date or timestamp field
    compared with a quoted literal that is no such value, fields of two classes compared, and
    arithmetic on text. `types` maps each column the expression may read to its assay type."""
    classes = {c: cls for c, t in types.items() if (cls := value_class(t))}
    out: list[str] = []
    for node in tree.find_all(*_COMPARISONS, exp.In, exp.Between, *_ARITHMETIC):
        this = _operand(node.this, classes)
        if isinstance(node, exp.In):
            others = node.expressions
        elif isinstance(node, exp.Between):
            others = [node.args.get("low"), node.args.get("high")]
        else:
            others = [node.expression]
        for other in others:
            that = _operand(other, classes) if other is not None else None
            if isinstance(node, _ARITHMETIC):
                for side in (this, that):
                    if side and side[0] in ("text", "literal text"):
                        out.append(f"does arithmetic (`{node.sql()}`) on {side[1]}")
                continue
            if this and that:
                problem = _pair_problem(this, that)
                if problem:
                    out.append(problem)
    return sorted(set(out))


#: What a `pii` column's value may pass through in an expression rule: forms no engine raises an
#: error on for a value of the column's type (decision 1152). An engine's error message quotes the
#: value (DuckDB's `strptime`, an overflow in `*`, a JSON function on malformed text), and dbt and
#: SQLMesh print it to the console and the logs. Casts are assay's own (decision 1146).
_PRIVATE_SAFE = (
    exp.Paren, exp.Not, exp.And, exp.Or, exp.Is, exp.In, exp.Between, exp.Like, exp.ILike, *_COMPARISONS,
    exp.Case, exp.If, exp.Coalesce, exp.Nullif, exp.Greatest, exp.Least, exp.Cast, exp.TryCast,
    exp.Length, exp.Lower, exp.Upper, exp.Trim, exp.Substring, exp.Left, exp.Right, exp.Concat, exp.DPipe,
    exp.StrPosition, exp.Contains, exp.StartsWith, exp.EndsWith, exp.Replace, exp.MD5,
    exp.Year, exp.Month, exp.Day, exp.DayOfWeek, exp.Extract, exp.DateDiff, exp.TimestampTrunc, exp.DateTrunc,
    *REGEX_MATCHES,
)


def private_problems(tree: exp.Expression, private: frozenset) -> list[str]:
    """Sentences for each form a `pii` column's value passes through that an engine may raise an
    error on, with the value in the message (decision 1152)."""
    out = []
    for col in tree.find_all(exp.Column):
        if col.table or col.name not in private:
            continue
        node = col.parent
        while node is not None and isinstance(node, _PRIVATE_SAFE) and not (
                isinstance(node, exp.Cast) and assay_type_of(node.to) is None):
            node = node.parent
        if node is not None:
            out.append(f"passes the pii field `{col.name}` through `{node.sql(dialect='duckdb')}`, which an engine may "
                       "stop on with an error that quotes the value; over a pii field write comparisons, null and "
                       "regex tests, `try_cast`, and the text and date functions that cannot fail (length, lower, "
                       "upper, trim, substring, strpos, starts_with, coalesce, extract, date_diff, ...), or derive "
                       "the value in the field's transforms.")
    return sorted(set(out))
