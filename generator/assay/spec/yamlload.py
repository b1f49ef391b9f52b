"""YAML loading that remembers where every value came from.

PyYAML's SafeLoader is used as is; we only wrap mappings and sequences so
that each key and item keeps its 1-based line. Scalars keep their ordinary
Python types, so pydantic sees plain data.
"""

from __future__ import annotations

import math
from typing import Any

import yaml


class LineDict(dict):
    """A mapping that knows the line of itself and of each key."""

    line: int = 0
    key_lines: dict
    # On a document's root only: (line, text as written, value) of each number YAML reads as NaN or infinity.
    non_finite: tuple = ()

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.key_lines = {}

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LineList(list):
    """A sequence that knows the line of itself and of each item."""

    line: int = 0
    item_lines: list
    non_finite: tuple = ()

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.item_lines = []

    def line_of(self, index: int) -> int:
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index]
        return self.line


# Deeper than any spec needs (a check's arguments are a few levels under `entities:`), and far
# below where PyYAML's recursive composer, and every walk after it, would exhaust Python's stack.
MAX_DEPTH = 64


# Values that aliases may add beyond the nodes written: `*a` repeats a whole subtree, so nine
# levels of nine aliases each are 387 million values from a few hundred lines, which every walk
# after the load would visit (an outside tester, session 36: minutes of CPU, no answer).
MAX_ALIAS_EXPANSION = 1_000_000


def _expanded(node: yaml.Node, sizes: dict, visiting: set | None = None) -> int:
    """How many values `node` is once every alias in it is written out (memoised per node). An
    alias inside the node it names (`&x {sub: *x}`) is a value without end: refused at the node,
    not answered with a RecursionError (an outside tester, session 41)."""
    known = sizes.get(id(node))
    if known is not None:
        return known
    visiting = set() if visiting is None else visiting
    if id(node) in visiting:
        raise yaml.composer.ComposerError(
            None, None, "an alias (`*name`) here repeats a node that holds it, so the value never ends; a spec "
            "value is finite: write the repeated part out instead of naming its own anchor inside it", node.start_mark,
        )
    visiting.add(id(node))
    if isinstance(node, yaml.SequenceNode):
        size = 1 + sum(_expanded(child, sizes, visiting) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size = 1 + sum(_expanded(k, sizes, visiting) + _expanded(v, sizes, visiting) for k, v in node.value)
    else:
        size = 1
    visiting.discard(id(node))
    sizes[id(node)] = size
    return size


class _Loader(yaml.SafeLoader):
    _depth = 0

    def __init__(self, stream: Any):
        super().__init__(stream)
        self.non_finite: list = []

    def compose_document(self) -> Any:
        node = super().compose_document()
        if node is not None:
            sizes: dict = {}
            if _expanded(node, sizes) > len(sizes) + MAX_ALIAS_EXPANSION:
                raise yaml.composer.ComposerError(
                    None, None, f"its aliases (`*name`) repeat more than {MAX_ALIAS_EXPANSION:,} values; a spec repeats "
                    "far less, so write the repeated part out or nest fewer aliases in aliases", node.start_mark,
                )
        return node

    def compose_node(self, parent: Any, index: Any) -> Any:
        # A document nested thousands of levels deep (`[[[[...`) is refused where it goes too deep,
        # not answered with a RecursionError.
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"the document is nested more than {MAX_DEPTH} levels deep here; a spec needs far "
                    "fewer, so close the open `[`/`{` or indent less", self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # PyYAML's own constructors raise plain ValueError and friends for a value that does
        # not fit its explicit tag (`!!int x`, `!!float y`, bad base64 after `!!binary`); give
        # them the node's position so they are reported like any other YAML mistake.
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
            raise yaml.constructor.ConstructorError(
                None, None, f"the value {node.value!r} does not fit its tag {node.tag} ({exc})"
                if isinstance(node, yaml.ScalarNode) else f"a {node.tag} node cannot be read ({exc})", node.start_mark,
            ) from None


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _entries(node: yaml.MappingNode, seen: frozenset = frozenset()) -> tuple[list, list]:
    """(the pairs written in `node`, the pairs its `<<:` merge keys bring in, the source listed first
    first), merges of merged mappings resolved. PyYAML's own flatten_mapping lets the later source
    win unless the two keys happen to be one interned string, so its answer depends on the key's
    length; the merge key's definition is that the source listed first wins."""
    written, merged = [], []
    for key_node, value_node in node.value:
        if key_node.tag != _MERGE_TAG:
            written.append((key_node, value_node))
            continue
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        for source in sources:
            if not isinstance(source, yaml.MappingNode):
                raise yaml.constructor.ConstructorError(
                    None, None, f"`<<:` merges a mapping or a list of mappings, not a {source.id}; write `<<: *<anchor of a mapping>`",
                    source.start_mark,
                )
            if id(source) in seen:  # `&a {<<: *a}`: a mapping merging itself brings nothing more
                continue
            inner_written, inner_merged = _entries(source, seen | {id(node)})
            merged.extend(inner_written + inner_merged)
    return written, merged


def _key_text(loader: _Loader, key_node: yaml.Node) -> Any:
    noted = len(loader.non_finite)
    key = loader.construct_object(key_node, deep=True)
    del loader.non_finite[noted:]  # a key `.inf:` is kept as its text below, so it is no number to refuse
    if not isinstance(key, str):
        # Every key of a spec is a name. YAML 1.1 reads a plain `on`, `yes`, `null` or `1.0`
        # as true, None or a number; keep the key as written, not as `True` or `None`.
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) and not key_node.style else str(key)
    return key


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    written, merged = _entries(node, frozenset({id(node)}))
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    chosen: dict = {}
    # Merged keys come first, as PyYAML orders them; a key written here overrides a merged one
    # (that is what a merge key is for), and only a key written twice here is a duplicate.
    for key_node, value_node in merged:
        chosen.setdefault(_key_text(loader, key_node), (key_node, value_node))
    here: set = set()
    for key_node, value_node in written:
        key = _key_text(loader, key_node)
        if key in here:
            # A repeated key silently overwrites in plain YAML; keep the first and
            # let validation report it.
            out.key_lines.setdefault("__duplicate__", []).append((key, key_node.start_mark.line + 1))
            continue
        here.add(key)
        chosen[key] = (key_node, value_node)
    for key, (key_node, value_node) in chosen.items():
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.item_lines = [child.start_mark.line + 1 for child in node.value]
    return out


def _construct_timestamp_as_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    # Dates in specs (range bounds) are compared as ISO text; never let YAML
    # turn them into datetime objects with a local-time interpretation.
    return loader.construct_scalar(node)


def _construct_float(loader: _Loader, node: yaml.ScalarNode) -> float:
    # YAML 1.1 reads `.nan`, `.inf`, `-.inf` (and a float past a double, `1.0e+400`) as numbers no
    # engine writes as a literal: Python spells them `nan`/`inf`, which SQL reads as a column name
    # (an outside tester, session 44: a Binder Error at build time, or a bronze column `nan` read
    # silently). Noted here, for every value of every spec at once, and refused by the loader.
    value = loader.construct_yaml_float(node)
    if not math.isfinite(value):
        loader.non_finite.append((node.start_mark.line + 1, node.value, value))
    return value


def non_finite_problem(written: str, value: float) -> str:
    """The sentence for a number YAML reads as NaN or infinity (decision 1153)."""
    reading = "not-a-number (NaN)" if value != value else ("infinity" if value > 0 else "minus infinity")
    return (f"`{written}` is a number YAML reads as {reading}, which no engine takes as a literal value; write a "
            f"finite number, or quote it (`'{written}'`) if the text is meant.")


# Why a NUL is refused in every text of a spec: no engine can take it in a literal.
NUL_PROBLEM = ("holds the character U+0000 (NUL), which no engine takes in SQL text (PostgreSQL text cannot hold it, "
               "DuckDB's parser stops reading the statement at it); remove it")


def _construct_text(loader: _Loader, node: yaml.ScalarNode) -> str:
    # A NUL written as the escape "\0" or "\u0000" would reach a generated literal and stop the
    # build (or shorten the value); refuse it where it is written.
    value = loader.construct_yaml_str(node)
    if "\x00" in value:
        raise yaml.constructor.ConstructorError(None, None, f"the value {value[:60]!r}{'...' if len(value) > 60 else ''} {NUL_PROBLEM}", node.start_mark)
    return value


_Loader.add_constructor("tag:yaml.org,2002:str", _construct_text)
_Loader.add_constructor("tag:yaml.org,2002:float", _construct_float)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)


class YamlSyntaxError(Exception):
    def __init__(self, line: int, message: str):
        self.line = line
        self.message = message
        super().__init__(f"line {line}: {message}")


# PyYAML's words for the two mistakes people make most, and what to do about them.
_ADVICE = (
    ("'\\t'", "indent with spaces, YAML does not allow tabs"),
    ("mapping values are not allowed here", "this line is indented differently from its siblings, or a value holding `: ` needs quotes"),
    ("found undefined alias", "define the anchor (`&name`) on a value above this `*name`, or write the value out"),
    ("found another document", "a spec file holds one YAML document: delete the `---` line and what follows it, or move that "
                               "into a file of its own"),
    ("could not determine a constructor", "remove the tag (`!name`): a spec holds plain YAML values"),
    ("expected <block end>", "this line is indented differently from the keys it belongs with; align it with them"),
    ("found unexpected end of stream", "close the quote or bracket that is still open"),
)
# Said after PyYAML's own words when none of the above applies (they name the construct, not the fix).
_GENERAL_ADVICE = ("correct the YAML here: indent with spaces, quote text holding `: ` or ` #`, and close every `[`, `{` "
                   "and quote")


def load_yaml(text: str) -> Any:
    """Parse one YAML document, keeping line numbers on mappings and sequences."""
    loader = None
    try:
        loader = _Loader(text)  # reads the stream at once: a forbidden character is refused here
        data = loader.get_single_data()
        if isinstance(data, (LineDict, LineList)) and loader.non_finite:
            data.non_finite = tuple(loader.non_finite)
        return data
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        message = f"{exc.problem or exc}".strip()
        # PyYAML notices a missing `]` or `}` only where the next token is; name the
        # line the unclosed construct started on, which is where the fix goes.
        if exc.context and exc.context_mark is not None and exc.context_mark.line + 1 != line:
            message += f" ({exc.context} that starts on line {exc.context_mark.line + 1})"
        for symptom, advice in _ADVICE:
            if symptom in message:
                message += f"; {advice}"
                break
        else:
            if isinstance(exc, (yaml.scanner.ScannerError, yaml.parser.ParserError)):
                message += f"; {_GENERAL_ADVICE}"
        raise YamlSyntaxError(line, message) from None
    except yaml.reader.ReaderError as exc:
        # A control character (NUL, ESC, ...) that YAML forbids anywhere in a document.
        line = text.count("\n", 0, exc.position) + 1
        char = exc.character if isinstance(exc.character, str) else chr(exc.character)
        if char == "\x00":
            raise YamlSyntaxError(line, f"the document {NUL_PROBLEM}") from None
        raise YamlSyntaxError(
            line,
            f"the character U+{ord(char):04X} is not allowed in YAML; delete it, or write it as an escape such as "
            f"\"\\u{ord(char):04X}\" inside a double-quoted value",
        ) from None
    except yaml.YAMLError as exc:  # pragma: no cover - defensive
        raise YamlSyntaxError(1, str(exc)) from None
    finally:
        if loader is not None:
            loader.dispose()


def locate(raw: Any, path: tuple, default: int = 1, tolerant: bool = True) -> tuple[Any, Any, int]:
    """Follow `path` through positioned YAML: (the last container reached, the last key, its line).

    The one line lookup of the loader and the validators. A part that names nothing is skipped
    when `tolerant` (pydantic inserts discriminator tags into error locations, and a missing
    key is still placed at its mapping), else the walk ends there (a path the caller built).
    """
    node, parent, last = raw, None, None
    line = getattr(raw, "line", default) or default
    for part in path:
        if isinstance(node, LineDict) and isinstance(part, str) and part in node:
            line = node.line_of(part)
            parent, last, node = node, part, node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.line_of(part)
            parent, last, node = node, part, node[part]
        elif not tolerant:
            break
        elif isinstance(node, LineDict) and isinstance(part, str):
            parent, last = node, part
    return parent, last, line
