"""Text predicates: regex match and extract, length in code points, NFC, character sets."""

from __future__ import annotations

from sqlglot import exp
from sqlmesh import macro

from ._core import AssayMacroError, dialect_of, lit, pick, render, string_arg, text

# Every form is a substring search: anchors are the pattern's business.
MATCH = {
    "default": "REGEXP_LIKE({v}, {p})",
    "duckdb": "REGEXP_MATCHES({v}, {p})",  # RE2
    "postgres": "({v} ~ {p})",  # POSIX ARE
    # 'p' selects PCRE: Redshift's POSIX dialect has no (?:...).
    "redshift": "(REGEXP_INSTR({v}, {p}, 1, 1, 0, 'p') > 0)",
    # REGEXP_LIKE anchors the whole value on Snowflake; REGEXP_INSTR searches.
    "snowflake": "(REGEXP_INSTR({v}, {p}) > 0)",
    "bigquery": "REGEXP_CONTAINS({v}, {p})",
    "spark": "({v} RLIKE {p})",
    "trino": "REGEXP_LIKE({v}, {p})",
}
# Text as a sort key compared byte by byte (decision 0984): PostgreSQL sorts by the database's
# collation ('a' before 'B' under en-US), DuckDB and Spark by bytes already.
BYTE_ORDER = {"default": "{v}", "postgres": '({v}) COLLATE "C"', "redshift": "{v}"}
CHAR_LENGTH = {"default": "CHAR_LENGTH({v})", "duckdb": "LENGTH({v})", "snowflake": "LENGTH({v})", "trino": "LENGTH({v})"}
# Engines with no Unicode normalization function are refused: failing at load time beats a rule
# that silently never fires.
IS_NFC = {
    "duckdb": "(NFC_NORMALIZE({v}) = {v})",
    "postgres": "(NORMALIZE({v}, NFC) = {v})",  # PostgreSQL 13+, UTF8 database
    "bigquery": "(NORMALIZE({v}, NFC) = {v})",
    "trino": "(NORMALIZE({v}, NFC) = {v})",
    # Spark SQL has no normalize(); ICU4J ships with Spark 4 (its collations use it) and reflect()
    # calls its static NFC composer, which throws on NULL, hence the guard (the dbt package's
    # spark__is_nfc; both are held to one table, tests/integration/test_spark_macro_table.py).
    "spark": "(CASE WHEN {v} IS NULL THEN NULL ELSE REFLECT('com.ibm.icu.text.Normalizer', 'compose', {v}, FALSE) = {v} END)",
    "databricks": "(CASE WHEN {v} IS NULL THEN NULL ELSE REFLECT('com.ibm.icu.text.Normalizer', 'compose', {v}, FALSE) = {v} END)",
}
# How one code point is written inside a regex class.
CODEPOINT_ESCAPE = {"default": "\\x{{{:X}}}", "postgres": "\\U{:08X}", "redshift": "\\x{{{:X}}}"}


def regex_groups(pattern: str, keep: int = 0, to_capturing: bool = False) -> tuple[str, int]:
    """Renumber the capturing groups of a portable-subset pattern.

    For engines whose extract function cannot pick group N (BigQuery, Redshift) or that lack
    (?:...) (Snowflake's POSIX ERE). With `to_capturing` every (?:...) becomes a plain group and
    the result names the new number of `keep`; otherwise every capturing group but `keep` becomes
    non-capturing and `keep` ends up group 1.
    """
    chars = list(pattern)
    out: list[str] = []
    esc = in_class = False
    class_start = -1
    skip = n = renumbered = 0
    kept = None
    for i, c in enumerate(chars):
        if skip:
            skip -= 1
        elif esc:
            out.append(c)
            esc = False
        elif c == "\\":
            out.append(c)
            esc = True
        elif in_class:
            out.append(c)
            # a ']' right after '[' or '[^' is a literal member, not the end
            if c == "]" and i > class_start:
                in_class = False
        elif c == "[":
            out.append(c)
            in_class = True
            class_start = i + (2 if chars[i + 1 : i + 2] == ["^"] else 1)
        elif c == "(" and chars[i + 1 : i + 3] == ["?", ":"]:
            if to_capturing:
                renumbered += 1
                out.append("(")
                skip = 2
            else:
                out.append(c)
        elif c == "(" and chars[i + 1 : i + 2] != ["?"]:
            n += 1
            renumbered += 1
            if n == keep:
                kept = renumbered if to_capturing else 1
            out.append("(" if (to_capturing or n == keep) else "(?:")
        else:
            out.append(c)
    if keep and kept is None:
        raise AssayMacroError(f"assay: pattern '{pattern}' has no group {keep}")
    return "".join(out), kept or 0


def regex_match_sql(value_sql: str, pattern: str, dialect: str) -> str:
    """SQL text: `value_sql` contains a match of `pattern` (NULL in, NULL out)."""
    if dialect == "snowflake":
        pattern = regex_groups(pattern, 0, True)[0]
    return pick(MATCH, dialect).format(v=value_sql, p=lit(pattern, dialect))


def regex_extract_sql(value_sql: str, pattern: str, group: int, dialect: str) -> str:
    """SQL text: group `group` of the first match, NULL when nothing matches."""
    v, p, g = value_sql, lit(pattern, dialect), int(group)
    family = dialect if dialect in MATCH else ("spark" if dialect == "databricks" else "default")
    if family == "duckdb":
        # regexp_extract returns '' rather than NULL when nothing matches.
        return f"CASE WHEN REGEXP_MATCHES({v}, {p}) THEN REGEXP_EXTRACT({v}, {p}, {g}) END"
    if family == "postgres":
        # regexp_match returns the captures only, so group 0 becomes group 1 of a wrapped pattern.
        if g == 0:
            return f"(REGEXP_MATCH({v}, {lit('(' + pattern + ')', dialect)}))[1]"
        return f"(REGEXP_MATCH({v}, {p}))[{g}]"
    if family == "redshift":
        # The 'e' flag returns the first group only, so every other group is made non-capturing.
        rp = lit(regex_groups(pattern, g)[0], dialect)
        flags = "'pe'" if g else "'p'"
        return f"CASE WHEN {regex_match_sql(v, pattern, dialect)} THEN REGEXP_SUBSTR({v}, {rp}, 1, 1, {flags}) END"
    if family == "snowflake":
        rp, rg = regex_groups(pattern, g, True)
        if g == 0:
            return f"REGEXP_SUBSTR({v}, {lit(rp, dialect)})"
        return f"REGEXP_SUBSTR({v}, {lit(rp, dialect)}, 1, 1, 'e', {rg})"
    if family == "bigquery":
        # REGEXP_EXTRACT allows at most one capturing group.
        return f"REGEXP_EXTRACT({v}, {lit(regex_groups(pattern, g)[0], dialect)})"
    if family == "spark":
        return f"CASE WHEN {v} RLIKE {p} THEN REGEXP_EXTRACT({v}, {p}, {g}) END"
    return f"REGEXP_EXTRACT({v}, {p}, {g})"


@macro()
def assay_regex_matches(evaluator, value: exp.Expr, pattern: str) -> exp.Expr:
    """The value contains a match of the portable-subset `pattern` (substring semantics).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_regex_matches(code, '^[0-9]{5}$')", "postgres")
    "(code ~ '^[0-9]{5}$')"
    >>> render_sql("@assay_regex_matches(code, '^[0-9]{5}$')", "bigquery")
    "REGEXP_CONTAINS(code, '^[0-9]{5}$')"
    """
    d = dialect_of(evaluator)
    return render(regex_match_sql(text(value, d), string_arg(pattern, "the pattern"), d), d)


@macro()
def assay_regex_extract(evaluator, value: exp.Expr, pattern: str, group: int = 0) -> exp.Expr:
    """Group `group` of the first match of `pattern`, NULL (never '') when nothing matches.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_regex_extract(s, '^([A-Z]+)-([0-9]+)$', 2)", "duckdb")
    "CASE WHEN REGEXP_MATCHES(s, '^([A-Z]+)-([0-9]+)$') THEN REGEXP_EXTRACT(s, '^([A-Z]+)-([0-9]+)$', 2) END"
    """
    d = dialect_of(evaluator)
    return render(regex_extract_sql(text(value, d), string_arg(pattern, "the pattern"), int(group), d), d)


# The characters `trim` removes from both ends: Unicode's White_Space property (decision 0960).
# Engines' own TRIM disagree (DuckDB strips the space separators, PostgreSQL and Spark U+0020
# only), so the set is named here and handed to every engine.
WHITE_SPACE = "".join(map(chr, (0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B),
                                0x2028, 0x2029, 0x202F, 0x205F, 0x3000)))


# sqlglot writes U+000B and U+000C as `\v` and `\f` where literals take backslash escapes, and
# Spark reads those as the letters v and f: they go in as CHR() instead.
BY_CODE = (0xB, 0xC)


def trim_white_space(value: exp.Expr) -> exp.Expr:
    """`value` without leading and trailing WHITE_SPACE, as an expression sqlglot spells per dialect."""
    chars: exp.Expr = exp.Literal.string("".join(c for c in WHITE_SPACE if ord(c) not in BY_CODE))
    for code in reversed(BY_CODE):
        chars = exp.DPipe(this=exp.Chr(expressions=[exp.Literal.number(code)]), expression=chars)
    return exp.Trim(this=value, expression=chars, position="BOTH")


@macro()
def assay_trim_white_space(evaluator, value: exp.Expr) -> exp.Expr:
    """The `trim` transform: leading and trailing white space removed, the same set on every engine.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_trim_white_space(s)", "postgres").startswith("TRIM(BOTH CHR(11) || CHR(12) || '")
    True
    """
    return trim_white_space(value.copy())


@macro()
def assay_byte_order(evaluator, value: exp.Expr) -> exp.Expr:
    """Text as a sort key compared byte by byte, whatever the database's collation.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_byte_order(_load_id)", "postgres")
    '(_load_id) COLLATE "C"'
    >>> render_sql("@assay_byte_order(_load_id)", "duckdb")
    '_load_id'
    """
    d = dialect_of(evaluator)
    return render(pick(BYTE_ORDER, d), d, v=value)


@macro()
def assay_char_length(evaluator, value: exp.Expr) -> exp.Expr:
    """Length in code points, never bytes or grapheme clusters.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_char_length(name)", "postgres")
    'LENGTH(name)'
    """
    d = dialect_of(evaluator)
    return render(pick(CHAR_LENGTH, d), d, v=value)


@macro()
def assay_is_nfc(evaluator, value: exp.Expr) -> exp.Expr:
    """The value is in Unicode Normalization Form C (NULL in, NULL out).

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_is_nfc(name)", "duckdb")
    '(NFC_NORMALIZE(name) = name)'
    """
    d = dialect_of(evaluator)
    template = IS_NFC.get(d)  # no inheritance: Redshift has no normalize() although Postgres does
    if template is None:
        raise AssayMacroError(f"assay_is_nfc: {d} has no Unicode normalization function")
    return render(template, d, v=value)


def parse_ranges(spec: str) -> list[tuple[int, int]]:
    """'U+0009,U+0400-U+04FF' -> [(9, 9), (1024, 1279)]."""
    out = []
    for part in filter(None, (p.strip() for p in spec.split(","))):
        lo, _, hi = part.partition("-")
        a = int(lo.strip()[2:], 16)
        b = int(hi.strip()[2:], 16) if hi else a
        out.append((a, b))
    return out


def clean_ranges(ranges: list[tuple[int, int]], min_cp: int = 0) -> list[tuple[int, int]]:
    """Clip to Unicode scalar values and cut out surrogates (no engine accepts them in a class
    and no valid text contains them); `min_cp` drops NUL where an engine cannot name it."""
    out = []
    for lo, hi in ranges:
        lo, hi = max(lo, min_cp), min(hi, 0x10FFFF)
        for a, b in ((lo, min(hi, 0xD7FF)), (max(lo, 0xE000), hi)):
            if a <= b:
                out.append((a, b))
    return out


def charset_sql(value_sql: str, ranges: list[tuple[int, int]], mode: str, dialect: str) -> str:
    if mode not in ("forbid", "allow"):
        raise AssayMacroError(f"assay_charset_violates: mode must be 'forbid' or 'allow', got {mode}")
    snowflake = dialect == "snowflake"
    clean = clean_ranges(ranges, 1 if snowflake else 0)
    if not clean:
        # nothing listed: forbid can never fire, allow fires on any character
        if mode == "allow":
            return f"({pick(CHAR_LENGTH, dialect).format(v=value_sql)} > 0)"
        return f"(CASE WHEN {value_sql} IS NOT NULL THEN FALSE END)"
    members = []
    for a, b in clean:
        if snowflake:
            # POSIX classes take no code point escapes: the characters go in as themselves.
            esc = [("\\" if chr(cp) in "\\]^-[" else "") + chr(cp) for cp in ((a, b) if b > a else (a,))]
            members.append("-".join(esc))
        else:
            fmt = pick(CODEPOINT_ESCAPE, dialect)
            members.append(fmt.format(a) + ("-" + fmt.format(b) if b > a else ""))
    cls = "[" + ("^" if mode == "allow" else "") + "".join(members) + "]"
    return regex_match_sql(value_sql, cls, dialect)


@macro()
def assay_charset_violates(evaluator, value: exp.Expr, ranges: str, mode: str) -> exp.Expr:
    """The value holds a character the rule forbids (`mode` 'forbid') or does not allow ('allow').

    `ranges` lists code points and ranges as in the spec: 'U+0009,U+0400-U+04FF'.

    >>> from assay_sqlmesh import render_sql
    >>> render_sql("@assay_charset_violates(name, 'U+0009,U+0400-U+04FF', 'forbid')", "duckdb")
    "REGEXP_MATCHES(name, '[\\\\x{9}\\\\x{400}-\\\\x{4FF}]')"
    """
    d = dialect_of(evaluator)
    sql = charset_sql(text(value, d), parse_ranges(string_arg(ranges, "ranges")), string_arg(mode, "mode"), d)
    return render(sql, d)
