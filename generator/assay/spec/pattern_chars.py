"""Reading the atoms of a ``pattern`` regex that match one character: backslash escapes and
character classes ``[...]``, each construct outside the portable subset refused by name.

:class:`_CharReader` also holds the cursor over the text and the refusal record, which the
grammar in :mod:`assay.spec.pattern_syntax` (its subclass ``_Parser``) shares: the two were one
class, split so that neither module passes 600 lines.
"""

from __future__ import annotations

import re
import string

from .pattern_tree import _Atom, _show, _Stop

_PUNCTUATION = frozenset(string.punctuation)
_CLASS_ESCAPES = frozenset("dwsDWS")
_CONTROL_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f"}


class _CharReader:
    """The cursor and refusal record of a parse, and the readers of escapes and classes."""

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

