"""The parser of the portable regex subset of a ``pattern`` rule: recursive descent over the
subset's grammar (alternation, branches, quantifiers, groups), reading the text into the tree of
:mod:`assay.spec.pattern_tree` and refusing by name every construct outside the subset as it
reads it.

Escapes and character classes are read by the base class in :mod:`assay.spec.pattern_chars`;
the whole-pattern rules and the public entry point, :func:`assay.spec.pattern.check_pattern`, are
in :mod:`assay.spec.pattern`.
"""

from __future__ import annotations

import re
from typing import Optional

from .pattern_chars import _CharReader
from .pattern_tree import _Atom, _Branch, _Piece, _Quant, _show

#: The largest count of ``{n}``/``{n,m}``: Postgres ARE's RE_DUPMAX.
MAX_REPEAT = 255
#: Groups nested deeper than this are refused (and the parser never recurses further).
MAX_GROUP_DEPTH = 64

_BOUND_RE = re.compile(r"\{([0-9]+)(?:(,)([0-9]*))?\}")
_HUGE = 10**6  # any count with more digits than this is simply "too large"
_NO_LOWER_BOUND_RE = re.compile(r"\{,([0-9]+)\}")


def _count(digits: str) -> int:
    """A repetition count; absurdly long digit strings are capped (and then refused)."""
    return int(digits) if len(digits) <= 6 else _HUGE


class _Parser(_CharReader):
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

    def _refused_repeat(self, pos: int, m: "re.Match[str]", kind: str, why: str) -> _Atom:
        """Refuse a group that repeats other text (a backreference or recursion) and step past it."""
        self.refuse(pos, f"{kind} {m.group(0)}", why, "write the text it would repeat out in full")
        self.i += m.end()
        return _Atom(pos, "refused", m.group(0))

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
            return self._refused_repeat(pos, m, kind, "RE2 does not know it and aborts the run")
        m = re.match(r"\(\?(?:R|[+-]?[0-9]+)\)", rest)
        if m:
            return self._refused_repeat(pos, m, "a recursive call",
                                        "no engine assay targets evaluates it the same way, and RE2 aborts the run")
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
