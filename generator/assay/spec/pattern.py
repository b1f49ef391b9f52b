"""The portable regex subset of a ``pattern`` rule (document 001, "pattern speaks a smaller
regex than you do").

A pattern runs on the engine, and the engines disagree: DuckDB and Trino run RE2, Postgres
runs POSIX ARE, Spark runs ``java.util.regex``. So a pattern may use only what the subset
names:

- literal characters, and a backslash before ASCII punctuation for a literal (``\\.``,
  ``\\\\``, ``\\-``); the control escapes ``\\n \\r \\t \\f``;
- ``.``;
- character classes ``[...]`` and ``[^...]`` holding literals, ranges ``a-z`` and the escapes
  above, ``\\d \\w \\s \\D \\W \\S`` included;
- ``\\d \\w \\s \\D \\W \\S``;
- the anchors ``^`` and ``$``;
- the quantifiers ``* + ? {n} {n,} {n,m}`` (counts 0 to 255, the most Postgres allows);
- alternation ``|`` and non-capturing groups ``(?:...)``.

Everything else is refused *by name*, including constructs nobody listed: the parser below
accepts what it recognises and reports everything else, rather than searching the text for a
list of forbidden spellings. Two whole-pattern rules follow the parse:

- every branch of the top-level alternation starts with ``^`` and ends with ``$`` (a SQL regex
  predicate matches a substring, so an unanchored ``[0-9]{5}`` also accepts ``abc12345xyz``);
- no unbounded repetition inside another unbounded repetition (``(?:a+)*``), and no nest of
  counted repetitions whose counts multiply past 1000 (RE2 refuses those).

:func:`check_pattern` returns one sentence per refusal, each naming the construct and its
1-based character position in the pattern and saying what to write instead; an empty list
means the pattern is accepted. It never raises on any text.

A note on YAML: a plain scalar keeps its backslashes, so ``regex: ^[^\\\\]*$`` in a spec is the
pattern ``^[^\\\\]*$`` ("no backslash anywhere") exactly as written.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["check_pattern", "MAX_REPEAT", "MAX_NESTED_REPEAT", "MAX_GROUP_DEPTH"]

#: The largest count of ``{n}``/``{n,m}``: Postgres ARE's RE_DUPMAX.
MAX_REPEAT = 255
#: The largest product of nested counted repetitions RE2 accepts.
MAX_NESTED_REPEAT = 1000
#: Groups nested deeper than this are refused (and the parser never recurses further).
MAX_GROUP_DEPTH = 64

_PUNCTUATION = frozenset(string.punctuation)
_CLASS_ESCAPES = frozenset("dwsDWS")
_CONTROL_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f"}
_BOUND_RE = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_HUGE = 10**6  # any count with more digits than this is simply "too large"
_NO_LOWER_BOUND_RE = re.compile(r"\{,([0-9]+)\}")


# --------------------------------------------------------------------------- the tree


def _count(digits: str) -> int:
    """A repetition count; absurdly long digit strings are capped (and then refused)."""
    return int(digits) if len(digits) <= 6 else _HUGE


@dataclass
class _Quant:
    pos: int  # 0-based offset of the quantifier's first character
    text: str
    min: int
    max: Optional[int]  # None: unbounded
    counted: bool  # written with braces

    @property
    def unbounded(self) -> bool:
        return self.max is None


@dataclass
class _Atom:
    pos: int
    kind: str  # "literal", "dot", "class", "escape", "anchor", "group", "refused"
    text: str = ""
    branches: List["_Branch"] = field(default_factory=list)  # groups only


@dataclass
class _Piece:
    atom: _Atom
    quant: Optional[_Quant] = None


@dataclass
class _Branch:
    start: int
    end: int
    pieces: List[_Piece] = field(default_factory=list)


class _Stop(Exception):
    """A structural error after which nothing more can be read."""


# --------------------------------------------------------------------------- the parser


def _show(text: str) -> str:
    """A construct as quoted in a message (control characters made visible)."""
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


class _Parser:
    """Recursive descent over the subset's grammar::

        pattern     := alternation END
        alternation := branch ('|' branch)*
        branch      := piece*
        piece       := atom quantifier?
        atom        := literal | '.' | class | escape | '^' | '$' | '(?:' alternation ')'
        quantifier  := ('*' | '+' | '?' | '{n}' | '{n,}' | '{n,m}')

    Named refusals are recorded and parsing continues past the construct, so one pattern is
    answered with all of its problems; only an unclosed group or class, a trailing backslash
    and a few unreadable group forms stop it.
    """

    def __init__(self, text: str):
        self.s = text
        self.n = len(text)
        self.i = 0
        self.problems: list[tuple[int, str]] = []

    # -- helpers -------------------------------------------------------------

    def refuse(self, pos: int, construct: str, why: str, instead: str) -> None:
        self.problems.append(
            (pos, f"{construct} at position {pos + 1} is refused: {why}; {instead}.")
        )

    def stop(self, pos: int, construct: str, why: str, instead: str) -> None:
        self.refuse(pos, construct, why, instead)
        raise _Stop()

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < self.n else ""

    # -- grammar -------------------------------------------------------------

    def parse(self) -> list[_Branch]:
        branches = self.alternation(depth=0)
        return branches

    def alternation(self, depth: int) -> list[_Branch]:
        branches = [self.branch(depth)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.branch(depth))
        return branches

    def branch(self, depth: int) -> _Branch:
        br = _Branch(start=self.i, end=self.i)
        while self.i < self.n:
            c = self.s[self.i]
            if c == "|":
                break
            if c == ")":
                if depth > 0:
                    break
                self.refuse(
                    self.i,
                    "an unmatched ')'",
                    "no group is open here",
                    "remove it, or write \\) for a literal parenthesis",
                )
                br.pieces.append(_Piece(_Atom(self.i, "refused", ")")))
                self.i += 1
                continue
            br.pieces.append(self.piece(depth))
        br.end = self.i
        return br

    def piece(self, depth: int) -> _Piece:
        c = self.s[self.i]
        if c in "*+?" or (c == "{" and self._bound_at(self.i)):
            q = self.quantifier()
            assert q is not None
            self.refuse(
                q.pos,
                f"the quantifier {q.text}",
                "it has nothing to repeat",
                f"put the character or group it repeats before it, or write \\{q.text[0]} "
                "for a literal",
            )
            return _Piece(_Atom(q.pos, "refused", q.text))
        atom = self.atom(depth)
        piece = _Piece(atom)
        q = self.quantifier()
        if q is None:
            return piece
        if atom.kind == "anchor":
            self.refuse(
                q.pos,
                f"the quantifier {q.text} after the anchor {atom.text}",
                "an anchor matches a position, so repeating it repeats nothing",
                f"write the anchor {atom.text} once, without a quantifier",
            )
        piece.quant = q
        # A second quantifier directly after the first.
        nxt = self.peek()
        if nxt and (nxt in "*+?" or (nxt == "{" and self._bound_at(self.i))):
            q2 = self.quantifier()
            assert q2 is not None
            self.refuse(
                q2.pos,
                f"the quantifier {q2.text} directly after {q.text}",
                "a quantifier cannot repeat a quantifier",
                f"wrap the repeated part in a group, as in (?:x{q.text}){q2.text}, "
                "or write one quantifier",
            )
        return piece

    def atom(self, depth: int) -> _Atom:
        pos = self.i
        c = self.s[pos]
        if c == "(":
            return self.group(depth)
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.escape(in_class=False)
        self.i += 1
        if c == ".":
            return _Atom(pos, "dot", c)
        if c in "^$":
            return _Atom(pos, "anchor", c)
        if c in "{}]":
            name = {"{": "a '{' that begins no quantifier", "}": "a '}' that closes no quantifier",
                    "]": "a ']' that closes no character class"}[c]
            self.refuse(
                pos,
                name,
                "engines disagree on whether a stray bracket or brace is a literal",
                f"write \\{c} for a literal {c}",
            )
            return _Atom(pos, "refused", c)
        if c == "\x00":
            self.refuse(
                pos,
                "a NUL character",
                "Postgres text cannot hold one, so no value could match it",
                "remove it",
            )
            return _Atom(pos, "refused", c)
        return _Atom(pos, "literal", c)

    # -- quantifiers ---------------------------------------------------------

    def _bound_at(self, j: int) -> bool:
        return bool(_BOUND_RE.match(self.s, j) or _NO_LOWER_BOUND_RE.match(self.s, j))

    def quantifier(self) -> Optional[_Quant]:
        pos = self.i
        c = self.peek()
        q: Optional[_Quant] = None
        if c == "*":
            q = _Quant(pos, "*", 0, None, False)
            self.i += 1
        elif c == "+":
            q = _Quant(pos, "+", 1, None, False)
            self.i += 1
        elif c == "?":
            q = _Quant(pos, "?", 0, 1, False)
            self.i += 1
        elif c == "{":
            m = _BOUND_RE.match(self.s, pos)
            if m:
                lo = _count(m.group(1))
                if m.group(2) is None:
                    hi: Optional[int] = lo
                elif m.group(3) == "":
                    hi = None
                else:
                    hi = _count(m.group(3))
                q = _Quant(pos, m.group(0), lo, hi, True)
                self.i = m.end()
                self._check_counts(q)
            else:
                m2 = _NO_LOWER_BOUND_RE.match(self.s, pos)
                if not m2:
                    return None
                hi = _count(m2.group(1))
                q = _Quant(pos, m2.group(0), 0, hi, True)
                self.i = m2.end()
                self.refuse(
                    pos,
                    f"the quantifier {m2.group(0)} with no lower bound",
                    "RE2 reads it as literal text while other engines read a repetition",
                    f"write {{0,{m2.group(1)}}}",
                )
        if q is None:
            return None
        # Lazy and possessive suffixes.
        nxt = self.peek()
        if nxt == "?":
            self.refuse(
                q.pos,
                f"the lazy quantifier {q.text}?",
                "a rule is a yes-or-no match, and laziness changes only which text is matched, "
                "never whether there is a match, and Postgres mixes it with greedy parts in ways "
                "RE2 does not",
                f"write the quantifier {q.text} alone",
            )
            self.i += 1
        elif nxt == "+":
            self.refuse(
                q.pos,
                f"the possessive quantifier {q.text}+",
                "RE2 does not know it and aborts the run, and it changes what matches",
                f"write the quantifier {q.text} alone",
            )
            self.i += 1
        return q

    def _check_counts(self, q: _Quant) -> None:
        for count in (q.min, q.max):
            if count is not None and count > MAX_REPEAT:
                self.refuse(
                    q.pos,
                    f"the count {count} in {q.text}",
                    f"Postgres allows repetition counts from 0 to {MAX_REPEAT}",
                    f"write a count of at most {MAX_REPEAT}, or + or * for an unbounded one",
                )
                break
        if q.max is not None and q.min > q.max:
            self.refuse(
                q.pos,
                f"the quantifier {q.text}",
                "its lower count is above its upper count, so it can never match",
                f"write {{{q.max},{q.min}}}",
            )

    # -- groups --------------------------------------------------------------

    def group(self, depth: int) -> _Atom:
        pos = self.i
        if depth + 1 > MAX_GROUP_DEPTH:
            self.stop(
                pos,
                "a group",
                f"groups are nested more than {MAX_GROUP_DEPTH} deep",
                "write the pattern with fewer nested groups",
            )
        rest = self.s[pos:]
        if rest.startswith("(?:"):
            self.i += 3
            return self._group_body(pos, depth, "(?:")
        if not rest.startswith("(?"):
            self.refuse(
                pos,
                "a capturing group",
                "a rule is a yes-or-no match and captures nothing, and numbered groups are what "
                "backreferences read",
                "write a non-capturing group (?:...) instead",
            )
            self.i += 1
            return self._group_body(pos, depth, "(")
        # (? followed by something other than ':'.
        opener_forms = [
            ("(?<=", "a look-behind (?<=...)"),
            ("(?<!", "a negative look-behind (?<!...)"),
            ("(?=", "a look-ahead (?=...)"),
            ("(?!", "a negative look-ahead (?!...)"),
            ("(?>", "an atomic group (?>...)"),
            ("(?|", "a branch-reset group (?|...)"),
        ]
        for opener, name in opener_forms:
            if rest.startswith(opener):
                if "look" in name:
                    why = "RE2 has no look-around and aborts the run"
                    instead = ("write the condition as a separate rule, or match the whole value "
                               "from ^ to $ without looking around")
                elif "atomic" in name:
                    why = "RE2 does not know atomic groups and aborts the run"
                    instead = "write a non-capturing group (?:...) instead"
                else:
                    why = "RE2 and Postgres do not know it"
                    instead = "write a non-capturing group (?:...) instead"
                self.refuse(pos, name, why, instead)
                self.i += len(opener)
                return self._group_body(pos, depth, opener)
        m = re.match(r"\(\?(?:P<|<(?![=!])|')([^>']*)[>']", rest)
        if m:
            self.refuse(
                pos,
                f"a named group {m.group(0)}",
                "a rule captures nothing, and Postgres does not know named groups",
                "write a non-capturing group (?:...) instead",
            )
            self.i += m.end()
            return self._group_body(pos, depth, m.group(0))
        m = re.match(r"\(\?(?:P=|P>|&)([^)]*)\)", rest)
        if m:
            kind = "a named backreference" if m.group(0).startswith("(?P=") else "a recursive call"
            self.refuse(
                pos,
                f"{kind} {m.group(0)}",
                "RE2 does not know it and aborts the run",
                "write the text it would repeat out in full",
            )
            self.i += m.end()
            return _Atom(pos, "refused", m.group(0))
        m = re.match(r"\(\?(?:R|[+-]?[0-9]+)\)", rest)
        if m:
            self.refuse(
                pos,
                f"a recursive call {m.group(0)}",
                "no engine assay targets evaluates it the same way, and RE2 aborts the run",
                "write the text it would repeat out in full",
            )
            self.i += m.end()
            return _Atom(pos, "refused", m.group(0))
        if rest.startswith("(?#"):
            end = self.s.find(")", pos)
            if end < 0:
                self.stop(pos, "a comment group (?#...)", "it is never closed",
                          "remove the comment")
            self.refuse(pos, "a comment group (?#...)", "RE2 does not know it",
                        "remove the comment and keep it in the rule's description")
            self.i = end + 1
            return _Atom(pos, "refused", self.s[pos:end + 1])
        if rest.startswith("(?("):
            self.stop(
                pos,
                "a conditional group (?(...)...)",
                "RE2 and Postgres do not know it",
                "write the alternatives with | inside (?:...)",
            )
        m = re.match(r"\(\?([a-zA-Z]*(?:-[a-zA-Z]*)?)([:)])", rest)
        if m and m.group(1):
            shown = m.group(0) + ("...)" if m.group(2) == ":" else "")
            self.refuse(
                pos,
                f"the inline flags {shown}",
                "engines disagree on which flags exist and how far they reach",
                "write the case variants out, e.g. [Aa] for either case of a",
            )
            self.i += m.end()
            if m.group(2) == ":":
                return self._group_body(pos, depth, m.group(0))
            return _Atom(pos, "refused", m.group(0))
        shown = _show(rest[:3])
        self.stop(
            pos,
            f"the group opener {shown}",
            "it is a group construct the portable subset does not know",
            "write a non-capturing group (?:...) instead",
        )
        raise AssertionError("unreachable")  # pragma: no cover

    def _group_body(self, pos: int, depth: int, opener: str) -> _Atom:
        branches = self.alternation(depth + 1)
        if self.peek() != ")":
            self.stop(
                pos,
                f"the group opened by {opener}",
                "it is never closed",
                "close it with ), or write \\( for a literal parenthesis",
            )
        self.i += 1
        return _Atom(pos, "group", opener, branches)

    # -- escapes -------------------------------------------------------------

    def escape(self, in_class: bool) -> _Atom:
        """Read ``\\x`` at self.i; return a literal, class-escape or refused atom."""
        pos = self.i
        if pos + 1 >= self.n:
            self.stop(
                pos,
                "a trailing backslash",
                "it escapes nothing",
                "remove it, or write \\\\ for a literal backslash",
            )
        c = self.s[pos + 1]
        self.i = pos + 2
        if c in _CLASS_ESCAPES:
            return _Atom(pos, "escape", "\\" + c)
        if c in _CONTROL_ESCAPES:
            return _Atom(pos, "literal", _CONTROL_ESCAPES[c])
        if c in _PUNCTUATION:
            return _Atom(pos, "literal", c)
        name, why, instead = self._escape_refusal(pos, c, in_class)
        self.refuse(pos, name, why, instead)
        return _Atom(pos, "refused", "\\" + c)

    def _escape_refusal(self, pos: int, c: str, in_class: bool) -> tuple[str, str, str]:
        """Name an escape outside the subset, and skip any argument it carries."""
        rest = self.s[self.i:]
        if c == "b":
            if in_class:
                return ("the escape \\b inside a character class",
                        "Postgres reads it as a backspace and RE2 refuses it",
                        "remove it")
            return ("the word boundary \\b",
                    "Postgres reads \\b as a backspace, and the subset has no word boundary",
                    "anchor the whole value with ^ and $ and spell the characters around the "
                    "word with classes")
        if c == "B":
            return ("the non-word-boundary \\B",
                    "Postgres reads \\B as a backslash, and the subset has no word boundary",
                    "anchor the whole value with ^ and $ and spell the characters with classes")
        if c == "A":
            return ("the start-of-text anchor \\A", "Postgres does not know it", "write ^ instead")
        if c in "zZ":
            return (f"the end-of-text anchor \\{c}", "Postgres and RE2 disagree on it",
                    "write $ instead")
        if c == "G":
            return ("the match-continuation anchor \\G", "RE2 and Postgres do not know it",
                    "write ^ instead")
        if c in "123456789":
            m = re.match(r"[0-9]*", rest)
            digits = c + (m.group(0) if m else "")
            self.i += len(digits) - 1
            return (f"the backreference \\{digits}",
                    "RE2 has no backreferences and aborts the run",
                    "write the text it would repeat out in full, or check the repetition in an "
                    "expression rule")
        if c == "0":
            return ("the octal escape \\0", "engines read octal escapes differently",
                    "write the character itself")
        if c in "kg":
            m = re.match(r"(?:<[^>]*>|\{[^}]*\}|'[^']*'|-?[0-9]+)", rest)
            if m:
                self.i += m.end()
            return (f"the backreference \\{c}{m.group(0) if m else ''}",
                    "RE2 has no backreferences and aborts the run",
                    "write the text it would repeat out in full")
        if c in "pP":
            m = re.match(r"(?:\{[^}]*\}|[A-Za-z])", rest)
            if m:
                self.i += m.end()
            return (f"the Unicode property class \\{c}{m.group(0) if m else ''}",
                    "Postgres does not know Unicode properties",
                    "write the characters as a class of explicit ranges, e.g. [A-Za-z]")
        if c == "x":
            m = re.match(r"(?:\{[0-9A-Fa-f]*\}|[0-9A-Fa-f]{1,2})", rest)
            if m:
                self.i += m.end()
            return (f"the hexadecimal escape \\x{m.group(0) if m else ''}",
                    "Postgres reads every hexadecimal digit that follows \\x while RE2 reads two",
                    "write the character itself")
        if c in "uU":
            return (f"the Unicode escape \\{c}", "RE2 does not know it",
                    "write the character itself")
        if c == "Q":
            end = rest.find("\\E")
            self.i += len(rest) if end < 0 else end + 2
            return ("the quoted-literal escape \\Q...\\E", "Postgres does not know it",
                    "escape each special character with a backslash instead")
        if c == "E":
            return ("the quote-ending escape \\E", "Postgres does not know it",
                    "escape each special character with a backslash instead")
        if c == "v":
            return ("the escape \\v",
                    "Java (Spark) reads it as any vertical whitespace while RE2 and Postgres read "
                    "a vertical tab", "write the character itself")
        if c in "mMyY":
            return (f"the word constraint \\{c}", "only Postgres knows it",
                    "anchor the whole value with ^ and $ and spell the characters with classes")
        if c == "K":
            return ("the match reset \\K", "RE2 and Postgres do not know it", "remove it")
        if c in "hHRXNC":
            return (f"the escape \\{c}", "it is not in the portable subset and the engines "
                    "disagree on it", "write a character class with the characters you mean")
        return (f"the escape \\{_show(c)}", "it is an escape the portable subset does not know",
                "write the character itself, or put a backslash only before punctuation or "
                "d, w, s, D, W, S, n, r, t, f")

    # -- character classes ---------------------------------------------------

    def char_class(self) -> _Atom:
        pos = self.i
        self.i += 1
        if self.peek() == "^":
            self.i += 1
        first = True
        while True:
            if self.i >= self.n:
                self.stop(pos, "the character class", "it is never closed",
                          "close it with ], and write \\] for a literal ] inside it")
            c = self.s[self.i]
            if c == "]":
                if first:
                    self.refuse(
                        self.i,
                        "a ']' at the start of a character class",
                        "it makes the class empty, or a literal ] on some engines and not others",
                        "write \\] for a literal ]",
                    )
                    self.i += 1
                    first = False
                    continue
                self.i += 1
                return _Atom(pos, "class", self.s[pos:self.i])
            lo = self._class_item(first)
            first = False
            if lo is None:
                continue
            lo_kind, lo_char, lo_pos = lo
            # A range? (A bare '-' never starts one.)
            bare_dash = lo_kind == "char" and self.s[lo_pos] == "-"
            if not bare_dash and self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.i += 1
                hi = self._class_item(False, range_end=True)
                if hi is None:
                    continue
                hi_kind, hi_char, hi_pos = hi
                if lo_kind != "char" or hi_kind != "char":
                    bad_pos = lo_pos if lo_kind != "char" else hi_pos
                    self.refuse(
                        bad_pos,
                        f"the range {self.s[lo_pos:self.i]} with a class escape as an end",
                        "a range runs between two characters",
                        "list the escape and the characters separately, and write \\- for a "
                        "literal -",
                    )
                elif ord(lo_char) > ord(hi_char):
                    self.refuse(
                        lo_pos,
                        f"the range {_show(self.s[lo_pos:self.i])}",
                        "it runs backwards, from a higher character to a lower one",
                        f"write {_show(hi_char)}-{_show(lo_char)}",
                    )

    def _class_item(self, first: bool, range_end: bool = False):
        """One element inside ``[...]``: ("char", c, pos), ("escape", letter, pos) or None."""
        pos = self.i
        c = self.s[pos]
        if c == "\\":
            atom = self.escape(in_class=True)
            if atom.kind == "literal":
                return ("char", atom.text, pos)
            if atom.kind == "escape":
                return ("escape", atom.text, pos)
            return None
        if c == "[":
            m = re.match(r"\[([:.=])(.*?)\1\]", self.s[pos:])
            if m:
                kind = {":": "the POSIX class", ".": "the collating element",
                        "=": "the equivalence class"}[m.group(1)]
                self.refuse(
                    pos,
                    f"{kind} {m.group(0)}",
                    "RE2 and Java do not read it as Postgres does",
                    "write the characters as explicit ranges, e.g. [A-Za-z] for [[:alpha:]]",
                )
                self.i = pos + m.end()
                return None
            self.refuse(
                pos,
                "a '[' inside a character class",
                "Java reads it as a nested class and Postgres may read it as a POSIX class",
                "write \\[ for a literal [",
            )
            self.i += 1
            return None
        if c == "-" and not first and self.peek(1) != "]":
            self.refuse(
                pos,
                "a '-' inside a character class",
                "it is neither a range between two characters nor the first or last character "
                "of the class",
                "write \\- for a literal -",
            )
            self.i += 1
            return None
        if c == "&" and self.peek(1) == "&":
            self.refuse(
                pos,
                "'&&' inside a character class",
                "Java (Spark) reads it as a class intersection",
                "write \\&\\& for two literal ampersands",
            )
            self.i += 2
            return None
        if c == "\x00":
            self.refuse(pos, "a NUL character", "Postgres text cannot hold one", "remove it")
            self.i += 1
            return None
        self.i += 1
        if c == "-" and range_end:
            # "a--]" style: a bare '-' as the end of a range.
            self.refuse(
                pos,
                "a '-' at the end of a range",
                "a bare - cannot end a range",
                "write \\- for a literal -",
            )
            return None
        return ("char", c, pos)


# --------------------------------------------------------------------------- whole-pattern rules


def _undecided(p: _Piece) -> bool:
    """A piece already refused for itself says nothing about anchoring either way."""
    return p.atom.kind == "refused" or (p.atom.kind == "anchor" and p.quant is not None)


def _starts_anchored(br: _Branch) -> bool:
    if not br.pieces:
        return False
    p = br.pieces[0]
    if p.quant is not None:
        return False
    if p.atom.kind == "anchor":
        return p.atom.text == "^"
    if p.atom.kind == "group" and p.atom.text == "(?:":
        return all(_starts_anchored(b) for b in p.atom.branches)
    return False


def _ends_anchored(br: _Branch) -> bool:
    if not br.pieces:
        return False
    p = br.pieces[-1]
    if p.quant is not None:
        return False
    if p.atom.kind == "anchor":
        return p.atom.text == "$"
    if p.atom.kind == "group" and p.atom.text == "(?:":
        return all(_ends_anchored(b) for b in p.atom.branches)
    return False


def _anchor_problems(text: str, branches: list[_Branch]) -> list[tuple[int, str]]:
    missing = []
    for idx, br in enumerate(branches):
        start_ok = _starts_anchored(br) or (bool(br.pieces) and _undecided(br.pieces[0]))
        end_ok = _ends_anchored(br) or (bool(br.pieces) and _undecided(br.pieces[-1]))
        if not (start_ok and end_ok):
            missing.append((idx, br, start_ok, end_ok))
    if not missing:
        return []
    fixed = "|".join(
        ("" if _starts_anchored(br) else "^") + text[br.start:br.end]
        + ("" if _ends_anchored(br) else "$")
        for br in branches
    )
    if any(_undecided(p) for br in branches for p in br.pieces[:1] + br.pieces[-1:]):
        fixed = "|".join("^" + text[br.start:br.end].lstrip("^").rstrip("$") + "$"
                         for br in branches)
    out = []
    for idx, br, start_ok, end_ok in missing:
        if not start_ok and not end_ok:
            lacks = "does not start with ^ or end with $"
        elif not start_ok:
            lacks = "does not start with ^"
        else:
            lacks = "does not end with $"
        if len(branches) == 1:
            where = "the pattern"
            example = ("so an unanchored pattern accepts any value that merely contains a match "
                       "([0-9]{5} accepts abc12345xyz, ^[0-9]{5}$ does not)")
        else:
            where = f"branch {idx + 1} of {len(branches)}"
            example = ("so with alternation each branch carries its own pair of anchors, as in "
                       "^a$|^b$")
        out.append((
            br.start,
            f"an unanchored pattern at position {br.start + 1} is refused: {where} {lacks}, "
            f"and every SQL regex predicate matches a substring, {example}; write "
            f"{_show(fixed)} instead.",
        ))
    return out


def _first_unbounded(branches: list[_Branch]) -> Optional[_Quant]:
    for br in branches:
        for p in br.pieces:
            if p.quant is not None and p.quant.unbounded:
                return p.quant
            if p.atom.kind == "group":
                inner = _first_unbounded(p.atom.branches)
                if inner is not None:
                    return inner
    return None


def _repetition_problems(text: str, branches: list[_Branch], product: int,
                         out: list[tuple[int, str]]) -> None:
    for br in branches:
        for p in br.pieces:
            q = p.quant
            inner_product = product
            if q is not None and q.counted:
                count = q.max if q.max is not None else q.min
                inner_product = product * max(count, 1)
                if inner_product > MAX_NESTED_REPEAT and count <= MAX_REPEAT and (
                    product <= MAX_NESTED_REPEAT
                ):
                    out.append((
                        q.pos,
                        f"the nested counted repetition {q.text} at position {q.pos + 1} is "
                        f"refused: with the counts around it the pattern repeats {inner_product} "
                        f"times in all, and RE2 refuses more than {MAX_NESTED_REPEAT}; write "
                        "smaller counts, or + or * where the exact count does not matter.",
                    ))
            if p.atom.kind != "group":
                continue
            if q is not None and q.unbounded:
                inner = _first_unbounded(p.atom.branches)
                if inner is not None:
                    group_text = _show(text[p.atom.pos:q.pos])
                    out.append((
                        p.atom.pos,
                        f"the nested unbounded repetition {group_text}{q.text} at position "
                        f"{p.atom.pos + 1} is refused: the group repeats without bound and so "
                        f"does {inner.text} at position {inner.pos + 1} inside it, which a "
                        "backtracking engine can take exponential time over; write one "
                        "unbounded repetition (for example a* for (?:a+)*) or give one of them "
                        "a count such as {1,50}.",
                    ))
            _repetition_problems(text, p.atom.branches, inner_product, out)


# --------------------------------------------------------------------------- entry point


def check_pattern(regex: str) -> list[str]:
    """Refusals of ``regex`` against the portable subset; ``[]`` when it is accepted.

    Each item is one sentence naming the construct and its 1-based position in the pattern
    and saying what to write instead.

    >>> check_pattern("^[0-9]{5}$")
    []
    >>> check_pattern("^(a)$")[0].startswith("a capturing group at position 2")
    True
    """
    if not isinstance(regex, str):
        return [
            f"a pattern of type {type(regex).__name__} at position 1 is refused: a pattern is "
            "text; write it as a YAML string, e.g. regex: ^[0-9]{5}$ ."
        ]
    if regex == "":
        return [
            "an empty pattern at position 1 is refused: it matches every value, so the rule "
            "would never fire; write an anchored pattern such as ^[0-9]{5}$ instead."
        ]
    parser = _Parser(regex)
    try:
        branches = parser.parse()
    except _Stop:
        return [msg for _, msg in sorted(parser.problems, key=lambda pm: pm[0])]
    problems = list(parser.problems)
    problems.extend(_anchor_problems(regex, branches))
    _repetition_problems(regex, branches, 1, problems)
    problems.sort(key=lambda pm: pm[0])
    return [msg for _, msg in problems]

