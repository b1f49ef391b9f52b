"""An expression rule's SQL as the judged row evaluates it: the author's text, with its casts
spelled by assay where the engine's own would be wrong (decision 1146).

- `try_cast(x as T)`: assay's try-cast per engine. sqlglot writes PostgreSQL's spelling for dbt
  and for a PostgreSQL SQLMesh project, where a try-cast does not exist, as a plain CAST: the rule
  stopped the build on the value it was written to judge. To `timestamp` it is the read a
  `timestamp` field's text gets (lower/instants.py: an offset converted to UTC).
- `cast(x as T)` over a `pii` field: the engine's message for a value that does not cast gives the
  value, and dbt and SQLMesh print it. The value is cast as a try-cast, and where that fails assay's
  own sentence is cast instead, so the build stops on the same rows with no value in its message
  (decision 1140's way for fields).
- `regexp_matches(x, 'p')` (a search) and `x ~ 'p'` / `regexp_full_match` (the whole value):
  assay's `regex_matches`, the `pattern` rule's. sqlglot's PostgreSQL spelling of the search is
  `x ~ 'p'`, which DuckDB reads as a whole-value match, so dbt on DuckDB judged `regexp_matches(city,
  'o')` false for `Rome`; and the whole-value match became REGEXP_FULL_MATCH, which PostgreSQL and
  Spark lack (decision 1147). Validation keeps the pattern a literal of the portable subset.

Every other cast, and a cast to a type assay has no portable cast to, is written as authored.
"""

from __future__ import annotations

from typing import Mapping, Optional

import sqlglot
from sqlglot import exp

from ..engine_types import assay_type_of
from ..identifiers import unused_marker
from .instants import text_to_instant
from .spelling import Spelling, Sql, is_simple

#: The regex calls assay spells per engine: DuckDB's `regexp_matches` (a search) and `~` /
#: `regexp_full_match` (a whole-value match). Validation refuses every other regex call.
REGEX_MATCHES = (exp.RegexpLike, exp.RegexpFullMatch)


def authored(sp: Spelling, text: str, private: frozenset = frozenset(), refusal: str = "",
             types: Optional[Mapping[str, str]] = None) -> str:
    """`text` (an expression rule, DuckDB's grammar) spelled for `sp`'s target, in the grammar of
    each engine that runs it (`engine_sql`: dbt's one project picks its engine's text when it
    renders; a text every engine reads alike is written once). `private`: the entity's pii
    columns; `refusal`: the sentence a failed cast of one of them stops the build with; `types`:
    the assay type of each column (a text ordering is ordered by code point, below)."""
    tree = sqlglot.parse_one(text, read="duckdb")
    return sp.engine_sql(lambda dialect: _spelled(sp, _ordered_by_code_point(tree.copy(), types or {}, dialect),
                                                  private, refusal, dialect, types or {}))


#: Text functions whose result orders as text (an operand `_ordered_by_code_point` collates).
_TEXT_CALLS = (exp.Upper, exp.Lower, exp.Trim, exp.Substring, exp.DPipe, exp.Concat, exp.Left, exp.Right,
               exp.Initcap, exp.Pad)
#: The dialects whose text comparisons follow the database's collation (an ICU `en-US` database
#: orders `B` after `a`); DuckDB and Spark order text by code point.
_COLLATED = ("postgres", "redshift")


def _ordered_by_code_point(tree: exp.Expression, types: Mapping[str, str], dialect: str) -> exp.Expression:
    """On PostgreSQL, a `<`, `<=`, `>`, `>=` or BETWEEN of text orders by code point (`COLLATE
    "C"`), as on DuckDB and Spark: `note < 'b'` kept `á` and quarantined `B` on a database whose
    collation is ICU's `en-US` (an outside tester, session 43), and the reverse on DuckDB. Text is
    a `string` column or a text function of anything; a literal orders as what it is compared with."""
    if dialect not in _COLLATED:
        return tree

    def is_text(node: exp.Expression) -> bool:
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.Column) and not node.table:
            return types.get(node.name) == "string"
        return isinstance(node, _TEXT_CALLS)

    def collated(node: exp.Expression) -> exp.Expression:
        return exp.Collate(this=node.copy(), expression=exp.to_identifier("C", quoted=True))

    for node in list(tree.find_all(exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)):
        operands = [node.this] + ([node.args["low"], node.args["high"]] if isinstance(node, exp.Between) else [node.expression])
        texts = [o for o in operands if is_text(o)]
        if texts and all(is_text(o) or (isinstance(o, exp.Literal) and o.is_string) for o in operands):
            # one collated operand decides the comparison's collation
            texts[0].replace(collated(texts[0]))
    return tree


def _is_timestamp(node: exp.Expression, types: Mapping[str, str]) -> bool:
    """Whether an operand is a timestamp already: a cast to one, or a `timestamp` column."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Cast):
        return assay_type_of(node.to) == "timestamp"
    return isinstance(node, exp.Column) and not node.table and types.get(node.name) == "timestamp"


def _spelled(sp: Spelling, tree: exp.Expression, private: frozenset, refusal: str, dialect: str,
             types: Mapping[str, str]) -> str:
    for col in tree.find_all(exp.Column):
        if not is_simple(col.name):
            col.set("this", exp.to_identifier(col.name, quoted=True))
    marker = unused_marker("assay_cast", tree.sql())
    lifted: dict[str, str] = {}

    def lift(node: exp.Expression) -> exp.Expression:
        if isinstance(node, REGEX_MATCHES):
            return _regex(node)
        if not isinstance(node, exp.Cast):
            return node
        assay_type = assay_type_of(node.to)
        safe = isinstance(node, exp.TryCast)
        reads_private = any(c.name in private for c in node.this.find_all(exp.Column))
        if assay_type is None or not (safe or reads_private):
            return node
        operand = _spelled(sp, node.this.copy(), private, refusal, dialect, types)
        if assay_type == "timestamp" and not _is_timestamp(node.this, types):
            # the read a `timestamp` field's text gets: an offset after the time is converted to
            # UTC, a zone assay does not read is NULL (the engines' casts dropped or refused offsets
            # unalike: an outside tester, session 45). The operand is written several times over, so
            # a timestamp operand keeps the engine's cast (nested, Spark spent minutes planning it).
            tried = text_to_instant(sp, sp.cast(operand, "string", False), True)
        else:
            tried = sp.cast(operand, assay_type, True)
        if not safe:
            said = sp.sql("case when {x} is not null and {t} is null then {s} end", x=operand, t=tried, s=sp.string(refusal))
            tried = sp.sql("coalesce({}, {})", tried, sp.cast(said, assay_type, False))
        name = f"{marker}_{len(lifted)}_"
        lifted[name] = f"({tried})"
        return exp.column(name)

    def _regex(node: exp.Expression) -> exp.Expression:
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string) or node.args.get("flag") is not None:
            return node  # refused by validation
        whole = isinstance(node, exp.RegexpFullMatch)
        operand = _spelled(sp, node.this.copy(), private, refusal, dialect, types)
        name = f"{marker}_{len(lifted)}_"
        lifted[name] = sp.call("regex_matches", Sql(operand), f"^(?:{pattern.this})$" if whole else pattern.this)
        return exp.column(name)

    # transform visits a node before its children and never the children of a node it replaced:
    # the operand of a lifted cast is spelled above, its own casts with it.
    tree = tree.transform(lift, copy=False)
    out = sp.write_authored(tree, dialect)
    for name, text in lifted.items():
        out = out.replace(name, text)
    return out


def engine_text(text: str, dialect: str) -> str:
    """The part of an expression rule's text (DuckDB's grammar) that `dialect`'s engine evaluates
    with its own functions: the calls assay spells itself (its try-casts and regex matches, above)
    replaced by their operands. Validation reads its calls against the engine's catalog."""

    def own(node: exp.Expression) -> exp.Expression:
        if isinstance(node, REGEX_MATCHES) or (isinstance(node, exp.TryCast) and assay_type_of(node.to) is not None):
            return node.this.copy().transform(own)
        return node

    return sqlglot.parse_one(text, read="duckdb").transform(own).sql(dialect=dialect)
