"""The portable regex subset of a `pattern` rule (document 001)."""

from __future__ import annotations

import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.spec.pattern import check_pattern
from tests.support.corpus import CORPUS



def _corpus_patterns() -> list[str]:
    found = []
    for path in sorted(CORPUS.glob("*/spec/*.yaml")):
        doc = yaml.safe_load(path.read_text())

        def walk(node):
            if isinstance(node, dict):
                if node.get("rule") == "pattern" and "regex" in node:
                    found.append(node["regex"])
                for v in node.values():
                    walk(v)
            elif isinstance(node, list):
                for v in node:
                    walk(v)

        walk(doc)
    return found


def only(regex: str) -> str:
    problems = check_pattern(regex)
    assert len(problems) == 1, problems
    return problems[0]


# --------------------------------------------------------------------------- accepted


def test_every_corpus_pattern_is_accepted():
    patterns = _corpus_patterns()
    assert r"^[^\\]*$" in patterns  # the YAML plain scalar keeps both backslashes
    assert len(set(patterns)) >= 3
    for p in patterns:
        assert check_pattern(p) == [], p


@pytest.mark.parametrize(
    "regex",
    [
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}.*$",
        r"^-?[0-9]+(?:\.[0-9]{1,9})?$",
        r"^[^\\]*$",
        r"^[0-9]{5}$",
        r"^a$|^b$",
        r"^(?:a|b)$",
        r"^(?:^a$|^b$)$",
        r"(?:^a$|^b$)",
        r"^\d\w\s\D\W\S$",
        r"^[\d\s_-]+$",
        r"^[a-zA-Z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$",
        r"^[-a]$",
        r"^[a-]$",
        r"^[\-\]\[\\^]$",
        r"^\.\*\+\?\(\)\{\}\|\^\$\/\-$",
        r"^\t\n\r\f$",
        r"^a{0}b{2,}c{1,255}$",
        r"^(?:a{2}){3}$",
        r"^(?:a+){2}$",
        r"^(?:a|)$",
        "^é+ü$",
        "^ $",
        r"^[^\]]*$",
    ],
)
def test_portable_patterns_are_accepted(regex):
    assert check_pattern(regex) == []


# --------------------------------------------------------------------------- refused by name


@pytest.mark.parametrize(
    "regex, construct, position",
    [
        (r"^(a)$", "a capturing group", 2),
        (r"^(?:a)\1$", "the backreference \\1", 7),
        (r"^(?P<year>[0-9]{4})$", "a named group (?P<year>", 2),
        (r"^(?<year>[0-9]{4})$", "a named group (?<year>", 2),
        (r"^(?'y'a)$", "a named group (?'y'", 2),
        (r"^(?:a)(?P=x)$", "a named backreference (?P=x)", 7),
        (r"^\k<x>$", "the backreference \\k<x>", 2),
        (r"^(?=a)a$", "a look-ahead (?=...)", 2),
        (r"^(?!a)b$", "a negative look-ahead (?!...)", 2),
        (r"^(?<=a)b$", "a look-behind (?<=...)", 2),
        (r"^(?<!a)b$", "a negative look-behind (?<!...)", 2),
        (r"^(?>a+)b$", "an atomic group (?>...)", 2),
        (r"^a++$", "the possessive quantifier ++", 3),
        (r"^a{2}+$", "the possessive quantifier {2}+", 3),
        (r"^a*?$", "the lazy quantifier *?", 3),
        (r"^a{1,3}?$", "the lazy quantifier {1,3}?", 3),
        (r"\Aabc$", "the start-of-text anchor \\A", 1),
        (r"^abc\Z", "the end-of-text anchor \\Z", 5),
        (r"^abc\z", "the end-of-text anchor \\z", 5),
        (r"^\bword$", "the word boundary \\b", 2),
        (r"^a\Bb$", "the non-word-boundary \\B", 3),
        (r"^(?i)abc$", "the inline flags (?i)", 2),
        (r"^(?i:abc)$", "the inline flags (?i:...)", 2),
        (r"^\p{L}+$", "the Unicode property class \\p{L}", 2),
        (r"^\PL$", "the Unicode property class \\PL", 2),
        (r"^[[:alpha:]]+$", "the POSIX class [:alpha:]", 3),
        (r"^[[=e=]]$", "the equivalence class [=e=]", 3),
        (r"^[[.a.]]$", "the collating element [.a.]", 3),
        (r"^\x41$", "the hexadecimal escape \\x41", 2),
        (r"^\u00e9$", "the Unicode escape \\u", 2),
        (r"^\Qa.b\E$", "the quoted-literal escape \\Q...\\E", 2),
        (r"^\v$", "the escape \\v", 2),
        (r"^\q$", "the escape \\q", 2),
        (r"^\G$", "the match-continuation anchor \\G", 2),
        (r"^\ma$", "the word constraint \\m", 2),
        (r"^a\Kb$", "the match reset \\K", 3),
        (r"^(?#note)a$", "a comment group (?#...)", 2),
        (r"^(?|a)$", "a branch-reset group (?|...)", 2),
        (r"^(?R)$", "a recursive call (?R)", 2),
        (r"^[a&&b]$", "'&&' inside a character class", 4),
    ],
)
def test_refusals_name_the_construct_and_its_position(regex, construct, position):
    problem = only(regex)
    assert problem.startswith(f"{construct} at position {position} is refused: "), problem
    assert problem.endswith(".")
    assert "; " in problem  # ... what to write instead


def test_capturing_group_says_to_write_a_non_capturing_group():
    assert "write a non-capturing group (?:...) instead" in only("^(ab)$")


def test_escape_unknown_to_the_subset_is_called_that():
    assert "an escape the portable subset does not know" in only(r"^\y$".replace("y", "j"))


def test_every_problem_is_reported_not_just_the_first():
    problems = check_pattern(r"^(a)(?=b)\1\p{L}$")
    assert [p.split(" at position")[0] for p in problems] == [
        "a capturing group",
        "a look-ahead (?=...)",
        "the backreference \\1",
        "the Unicode property class \\p{L}",
    ]


def test_nested_capturing_groups_are_each_reported():
    assert len(check_pattern("^((a))$")) == 2


# --------------------------------------------------------------------------- anchors


def test_unanchored_pattern_explains_substring_matching():
    problem = only("[0-9]{5}")
    assert problem.startswith("an unanchored pattern at position 1 is refused")
    assert "matches a substring" in problem
    assert "abc12345xyz" in problem
    assert problem.endswith("write ^[0-9]{5}$ instead.")


def test_half_anchored_pattern_names_the_missing_end():
    assert "does not end with $" in only("^[0-9]{5}")
    assert "does not start with ^" in only("[0-9]{5}$")


def test_each_alternation_branch_carries_its_own_anchors():
    # ^ binds to the first branch and $ to the last: neither branch is whole.
    problems = check_pattern("^a|b$")
    assert len(problems) == 2
    assert "branch 1 of 2 does not end with $" in problems[0]
    assert "branch 2 of 2 does not start with ^" in problems[1]
    assert all(p.endswith("write ^a$|^b$ instead.") for p in problems)


def test_alternation_with_one_unanchored_branch():
    problem = only("^a$|b")
    assert problem.startswith("an unanchored pattern at position 5 is refused: branch 2 of 2")
    assert "^a$|^b$" in problem
    assert problem.endswith("write ^a$|^b$ instead.")


def test_anchor_inside_a_wrapping_group_counts():
    assert check_pattern("(?:^a$|^b$)") == []
    assert check_pattern("(?:^a$|b)") != []


# --------------------------------------------------------------------------- repetition


@pytest.mark.parametrize("regex", ["^(?:a+)*$", "^(?:a*)+$", "^(?:a|b+){2,}$", "^(?:(?:a+)b)*$"])
def test_nested_unbounded_repetition_is_refused(regex):
    problem = only(regex)
    assert problem.startswith("the nested unbounded repetition"), problem
    assert "(for example a* for (?:a+)*)" in problem


def test_nested_counted_repetition_over_re2_limit():
    problem = only("^(?:(?:a{10}){10}){11}$")
    assert "1100 times in all" in problem and "1000" in problem


def test_repeat_count_above_postgres_limit():
    assert "from 0 to 255" in only("^a{256}$")


def test_reversed_count():
    assert "write {2,5}" in only("^a{5,2}$")


def test_quantifier_without_lower_bound():
    assert "write {0,3}" in only("^a{,3}$")


@pytest.mark.parametrize("regex", ["^*a$", "^a|*$", "^(?:+a)$"])
def test_quantifier_with_nothing_to_repeat(regex):
    problems = check_pattern(regex)
    assert any("nothing to repeat" in p or "repeating it repeats nothing" in p for p in problems)


def test_stacked_quantifiers():
    assert "cannot repeat a quantifier" in only("^a**$")


# --------------------------------------------------------------------------- structure


def test_empty_pattern_is_refused():
    assert only("").startswith("an empty pattern at position 1 is refused")


@pytest.mark.parametrize(
    "regex, text",
    [
        ("^(?:a$", "the group opened by (?: at position 2 is refused: it is never closed"),
        ("^a)$", "an unmatched ')' at position 3"),
        ("^[a-z$", "the character class at position 2 is refused: it is never closed"),
        ("^a\\", "a trailing backslash at position 3"),
        ("^[]a]$", "a ']' at the start of a character class at position 3"),
        ("^a]$", "a ']' that closes no character class at position 3"),
        ("^{$", "a '{' that begins no quantifier at position 2"),
        ("^a}$", "a '}' that closes no quantifier at position 3"),
        ("^[z-a]$", "the range z-a at position 3"),
        ("^[a-c-e]$", "a '-' inside a character class at position 6"),
        ("^[\\d-z]$", "the range \\d-z with a class escape as an end at position 3"),
        ("^[a[b]$", "a '[' inside a character class at position 4"),
        ("^a\x00$", "a NUL character at position 3"),
    ],
)
def test_structural_refusals(regex, text):
    problems = check_pattern(regex)
    assert any(p.startswith(text) for p in problems), problems


def test_deep_nesting_is_refused_without_recursion_error():
    problems = check_pattern("^" + "(?:" * 500 + "a" + ")" * 500 + "$")
    assert any("nested more than 64 deep" in p for p in problems)


def test_non_text_pattern_is_refused():
    assert "a pattern is text" in only(12345)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- properties


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("^$.|()[]{}*+?\\-:=!<>,0123456789adwsDWSbpPxAZkqQE&'")),
               max_size=24))
def test_checker_never_crashes_and_accepted_patterns_compile(text):
    problems = check_pattern(text)
    assert isinstance(problems, list) and all(isinstance(p, str) and p for p in problems)
    if not problems:
        re.compile(text)  # the subset is a subset of what Python's engine reads


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=40))
def test_checker_never_crashes_on_arbitrary_text(text):
    problems = check_pattern(text)
    for p in problems:
        assert " at position " in p and p.endswith(".")


def test_the_anchored_form_is_offered_only_when_it_would_be_accepted():
    # offering ^(\d+)-\1$ would send the user to another refusal (its group and backreference)
    unanchored = [m for m in check_pattern(r"(\d+)-\1") if m.startswith("an unanchored pattern")]
    assert len(unanchored) == 1 and unanchored[0].endswith("; anchor it with ^ and $.")
    assert check_pattern("[0-9]{5}")[0].endswith("; write ^[0-9]{5}$ instead.")
