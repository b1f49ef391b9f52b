"""SQL text a Jinja parser reads as plain text, for SQLMesh models and audits.

SQLMesh renders no Jinja in assay's models, but it *parses* the SQL of every model and statement
with Jinja when it loads the project (to find the Jinja macros and variables it references). A
spec text that is not well-formed Jinja (`{{` alone, `{% x %}`, `{#` with no `#}`) inside a
string literal or a comment would make the whole project fail to load (decision 0971). So no
generated SQL holds a Jinja opener (`{{`, `{%`, `{#`):

- a string literal holding one is written as a concatenation of literals cut after each `{` that
  opens (`'a{{b'` is `('a{' || '{b')`), which every engine evaluates to the same text and which
  the `assay_sqlmesh` macros fold back (`assay_sqlmesh._core.literal_text`);
- a comment holding one gets a space after that `{` (a comment is no value: nothing reads it).

Names never need it: they are validated identifiers.
"""

from __future__ import annotations

import re

from sqlglot import exp

# A `{` that opens a Jinja block, comment or expression: cut (or space) right after it.
_OPENER = re.compile(r"\{(?=[{%#])")


def has_opener(text: str) -> bool:
    """Whether `text` holds a Jinja opener."""
    return _OPENER.search(text) is not None


def literal(text: str) -> exp.Expression:
    """The string literal of `text`, as a concatenation of literals when it holds an opener."""
    if not has_opener(text):
        return exp.Literal.string(text)
    cuts = [m.end() for m in _OPENER.finditer(text)]
    nodes: list[exp.Expression] = [exp.Literal.string(text[a:b]) for a, b in zip([0, *cuts], [*cuts, len(text)])]
    # Joined pairwise, each pair in parentheses: a chain `a || b || c ...` parses left-deep, and a
    # text with thousands of openers would pass DuckDB's expression depth limit (1000).
    while len(nodes) > 1:
        pairs = [exp.Paren(this=exp.DPipe(this=a, expression=b)) for a, b in zip(nodes[0::2], nodes[1::2])]
        nodes = pairs + nodes[len(pairs) * 2:]
    return nodes[0]


def tree(node: exp.Expression) -> exp.Expression:
    """`node` with every string literal and comment written without a Jinja opener (in place)."""
    for n in list(node.walk()):
        if n.comments:
            n.comments = [_OPENER.sub("{ ", c) for c in n.comments]
        if isinstance(n, exp.Literal) and n.is_string and has_opener(n.this):
            n.replace(literal(n.this))
    if isinstance(node, exp.Literal) and node.is_string and has_opener(node.this):
        return literal(node.this)
    return node
