"""SQL check files (document 002): ``checks/<namespace>/<table>/<name>.sql``.

One file is one check of one table. The check is exactly one SELECT that returns the rows that
are wrong: it passes when it returns none. Its count is
``SELECT COUNT(<the row as JSON>) FROM (<check>) AS assay_check`` (:func:`count_sql`).

A file may open with a header block::

    /* assay
    on_failure: warn
    description: Temperatures a station can physically report.
    */
    SELECT * FROM silver.station_temperatures
    WHERE air_temp_c NOT BETWEEN -90 AND 60

The header exists only when the file's *first* line is ``/*`` followed by the tool's name
(``assay``) and a newline; its body, up to ``*/``, is YAML with the keys ``on_failure``
(``block``, ``warn`` or ``keep``) and ``description`` and no others. A one-line
``/* ... */`` comment is ordinary SQL, not a header.

The ``on_failure`` in force is the header's own, else the project default of ``assay.yml``
(``block`` or ``warn``; ``keep`` cannot be a default), else ``block``; the check records where
it came from (``header``, ``assay.yml`` or ``default``).

Refusals (all reported, each with the file and, where there is one, the line in the file):

- the path is not ``<checks dir>/<namespace>/<table>/<name>.sql``, or the name is one of the
  reserved ``(none)`` and ``(unreadable)``;
- an unclosed header, a header that is not YAML keys, a key other than ``on_failure`` and
  ``description`` (the message lists the accepted ones), a value of ``on_failure`` other than
  block, warn or keep;
- SQL that does not parse, that is not exactly one statement, that is not a SELECT (or
  writes: ``SELECT ... INTO``, a data-modifying CTE), or that does not read its own table as
  ``<namespace>.<table>`` or ``<table>``;
- more than 50 SQL checks on one table (:func:`check_table_limits`);
- ``keep`` on a check of an incremental model or of a view (:func:`refuse_keep`, called by the
  validator, which knows each table's materialization);
- a call of a function that reads host files, the environment or the network, or writes state,
  and a file or URL read as a table (:mod:`assay.checks.sqlguard`, one refusal per call).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Iterable, Optional, Union

import sqlglot
import yaml
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from assay.checks import Problem
from assay.checks.check_dialect import other_readings
from assay.checks.sqlguard import refused_calls, refused_sigils
from assay.parse_problem import parse_position, parse_problem
from assay.spec.yamlload import NUL_PROBLEM

__all__ = [
    "SqlCheck",
    "parse_check_file",
    "check_table_limits",
    "count_sql",
    "refuse_keep",
    "SQL_CHECK_INVALID",
    "SQL_CHECKS_INVALID",
    "HEADER_KEYS",
    "ON_FAILURE_VALUES",
    "DEFAULT_ON_FAILURE_VALUES",
    "ON_FAILURE_SOURCES",
    "RESERVED_NAMES",
    "MAX_SQL_CHECKS_PER_TABLE",
    "PARSE_DIALECTS",
]

SQL_CHECK_INVALID = "SQL_CHECK_INVALID"
SQL_CHECKS_INVALID = "SQL_CHECKS_INVALID"

HEADER_KEYS = ("on_failure", "description")
ON_FAILURE_VALUES = ("block", "warn", "keep")
DEFAULT_ON_FAILURE_VALUES = ("block", "warn")
ON_FAILURE_SOURCES = ("header", "assay.yml", "default")
RESERVED_NAMES = ("(none)", "(unreadable)")
MAX_SQL_CHECKS_PER_TABLE = 50
#: The dialects a check is parsed with, in order; the first that reads it wins.
PARSE_DIALECTS: tuple[Optional[str], ...] = ("duckdb", "postgres", None)
TOOL_NAME = "assay"

_HEADER_OPEN_RE = re.compile(r"/\*[ \t]*" + TOOL_NAME + r"[ \t]*\r?")
_WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
           exp.Command, exp.Into)


@dataclass(frozen=True)
class SqlCheck:
    """One SQL check file, read and resolved.

    ``name`` is ``NAMESPACE.TABLE/NAME`` as the results show it
    (``silver.station_temperatures/plausible_range``); ``file_name`` is the file's own name
    (``plausible_range.sql``); ``path`` the path the caller gave; ``sql`` the statement without
    the header block, surrounding blank space and trailing semicolons. ``on_failure`` is the
    resolved value and ``on_failure_source`` where it came from. ``header_line_count`` is the
    number of lines the header block takes (0 without one); ``on_failure_line`` the line of
    the header's ``on_failure`` (0 when it is not stated); ``sql_line`` the file line the
    statement starts on.
    """

    name: str
    namespace: str
    table: str
    file_name: str
    path: str
    sql: str
    on_failure: str
    on_failure_source: str
    description: Optional[str]
    header_line_count: int
    on_failure_line: int = 0
    sql_line: int = 1

    @property
    def check_name(self) -> str:
        """The check's own part of the name: ``plausible_range``."""
        return self.name.split("/", 1)[1]

    @property
    def reported_id(self) -> str:
        """The check's ``check_id`` in 000's wire shape (`assay checks --json`): ``PLAUSIBLE_RANGE``."""
        return reported_check_id(self.name)

    @property
    def qualified_table(self) -> str:
        """``namespace.table``."""
        return f"{self.namespace}.{self.table}"

    @property
    def blocking(self) -> bool:
        """Whether a failure or an error sets the table back (``block``)."""
        return self.on_failure == "block"


def reported_check_id(name: str) -> str:
    """000's ``check_id`` of a SQL check file named ``NAMESPACE.TABLE/NAME`` (decision 0948): its
    file's stem upper-cased, as a declared check's id is; the table goes in the result's ``scope``.
    Validation refuses a stem whose upper-cased form another check of the table reports, or that
    does not start with a letter, so the id is one check's and matches ``^[A-Z][A-Z0-9_]{0,127}$``."""
    return name.rsplit("/", 1)[-1].upper()


# --------------------------------------------------------------------------- parsing


class _Problems:
    def __init__(self, path: str):
        self.path = path
        self.items: list[Problem] = []
        self.header_unclosed = False

    def add(self, message: str, line: int = 0, code: str = SQL_CHECK_INVALID) -> None:
        self.items.append(Problem(code, message, line, self.path))


def _split_path(rel_path: str, checks_dir: Optional[str], out: _Problems
                ) -> Optional[tuple[str, str, str, str]]:
    norm = rel_path.replace("\\", "/")
    root = (checks_dir or "").strip("/")
    expected = f"{root or 'checks'}/<namespace>/<table>/<name>.sql"
    if root and norm.startswith(root + "/"):
        rest: Optional[str] = norm[len(root) + 1:]
    elif norm.count("/") == 2:
        rest = norm  # already relative to the checks directory
    else:
        rest = None
    parts = rest.split("/") if rest is not None else []
    if rest is None or len(parts) != 3 or not all(parts):
        out.add(f"the check file {rel_path} is not at {expected}; put one file per check in the "
                "folder of its table")
        return None
    namespace, table, file_name = parts
    if not file_name.endswith(".sql"):
        out.add(f"the check file {rel_path} does not end in .sql; name it <name>.sql")
        return None
    stem = file_name[: -len(".sql")]
    if not stem:
        out.add(f"the check file {rel_path} has no name before .sql; name it after what it "
                "checks, e.g. plausible_range.sql")
        return None
    if stem in RESERVED_NAMES:
        out.add(f"the check file {rel_path} is named {stem}, a name results reserve for a table "
                "without checks or with an unreadable one; give the check another name")
        return None
    return namespace, table, file_name, stem


def opens_header(line: str) -> bool:
    """Whether a line is a header block's opening (`/* assay`), wherever it stands."""
    return bool(_HEADER_OPEN_RE.fullmatch(line))


def _read_header(text: str, out: _Problems, label: str) -> tuple[int, int, dict, dict]:
    """Find and read the header block.

    Returns ``(header_end, header_line_count, values, key_lines)``: ``header_end`` is the
    offset just past ``*/`` (0 without a header).
    """
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_end < 0 or not _HEADER_OPEN_RE.fullmatch(first_line):
        return 0, 0, {}, {}
    close = text.find("*/", first_end + 1)
    if close < 0:
        out.add(f"{label}: the header block opened on line 1 is never closed; end it with */ on "
                "a line of its own", 1)
        out.header_unclosed = True
        return len(text), text.count("\n") + 1, {}, {}
    header_end = close + 2
    header_lines = text.count("\n", 0, close) + 1
    body = text[first_end + 1:close]
    body_first_line = 2
    try:
        node = yaml.compose(body, Loader=yaml.SafeLoader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = body_first_line + mark.line if mark is not None else body_first_line
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        out.add(f"{label}: the header block is not YAML ({problem}); write one key per line, "
                "e.g. on_failure: warn", line)
        return header_end, header_lines, {}, {}
    if node is None:
        return header_end, header_lines, {}, {}
    if not isinstance(node, yaml.MappingNode):
        out.add(f"{label}: the header block holds {'a list' if isinstance(node, yaml.SequenceNode) else 'text'}, "
                "not keys; write on_failure: and description: lines", body_first_line + node.start_mark.line)
        return header_end, header_lines, {}, {}
    values: dict = {}
    key_lines: dict = {}
    loader = yaml.SafeLoader("")
    try:
        for key_node, value_node in node.value:
            line = body_first_line + key_node.start_mark.line
            key = loader.construct_object(key_node, deep=True)
            key = key if isinstance(key, str) else str(key)
            if key in values or key in key_lines:
                out.add(f"{label}: the header block states {key} twice; state it once", line)
                continue
            key_lines[key] = line
            if key not in HEADER_KEYS:
                out.add(f"{label}: the header block states {key}, which a check's header does not "
                        f"accept; the accepted keys are {' and '.join(HEADER_KEYS)}", line)
                continue
            values[key] = loader.construct_object(value_node, deep=True)
    except yaml.YAMLError as err:  # e.g. an unknown tag
        out.add(f"{label}: the header block is not plain YAML ({err}); write one key per line",
                body_first_line)
    finally:
        loader.dispose()
    return header_end, header_lines, values, key_lines


class _QuietSqlglot(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:  # noqa: D401
        return False


def _parse_sql(masked: str):
    """Parse with each dialect of PARSE_DIALECTS in turn; return (statements, dialect, error)."""
    logger = logging.getLogger("sqlglot")
    quiet = _QuietSqlglot()
    logger.addFilter(quiet)
    first_error: Optional[Exception] = None
    try:
        for dialect in PARSE_DIALECTS:
            try:
                parsed = sqlglot.parse(masked, read=dialect)
            except (ParseError, TokenError) as err:
                first_error = first_error or err
                continue
            except Exception as err:  # noqa: BLE001 - sqlglot may fail in other ways on garbage
                first_error = first_error or err
                continue
            return [p for p in parsed
                    if p is not None and not isinstance(p, exp.Semicolon)], dialect, None
    finally:
        logger.removeFilter(quiet)
    return None, None, first_error


def _statement_starts(masked: str, dialect: Optional[str]):
    """Where each statement starts, [(line, column)], and the trailing semicolons."""
    try:
        tokens = sqlglot.tokenize(masked, read=dialect)
    except Exception:  # noqa: BLE001
        return [], []
    groups: list[list] = [[]]
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            groups.append([])
        else:
            groups[-1].append(tok)
    starts = [(g[0].line, g[0].col - len(g[0].text) + 1) for g in groups if g]
    last_real = max((t.end for t in tokens if t.token_type != TokenType.SEMICOLON), default=-1)
    trailing = [t for t in tokens if t.token_type == TokenType.SEMICOLON and t.start > last_real]
    return starts, trailing


def _table_references(stmt: exp.Expression) -> list[tuple[str, str]]:
    ctes = {c.alias_or_name.lower() for c in stmt.find_all(exp.CTE)}
    refs = []
    for t in stmt.find_all(exp.Table):
        name = t.name
        if not name:
            continue
        db = t.db or ""
        if not db and name.lower() in ctes:
            continue
        refs.append((db, name))
    return refs


def parse_check_file(
    rel_path: str,
    text: str,
    *,
    default_on_failure: str,
    default_source: str,
    checks_dir: Optional[str] = "checks",
) -> tuple[Optional[SqlCheck], list[Problem]]:
    """Read one SQL check file.

    ``rel_path`` is the file's path, either from the project root
    (``<checks_dir>/<namespace>/<table>/<name>.sql``) or from the checks directory itself
    (``<namespace>/<table>/<name>.sql``); ``text`` its content. ``default_on_failure`` is the value a check without its
    own ``on_failure`` takes (``block`` or ``warn``) and ``default_source`` where that came from
    (``assay.yml`` when the project sets it, ``default`` otherwise).

    Returns the check, or ``None`` when it has problems, and every problem found (each with
    ``file`` set to ``rel_path`` and the line in the file).
    """
    if default_on_failure not in DEFAULT_ON_FAILURE_VALUES:
        raise ValueError(
            f"the default on_failure is block or warn (keep cannot be a default), not "
            f"{default_on_failure!r}"
        )
    if default_source not in ("assay.yml", "default"):
        raise ValueError(f"default_source is 'assay.yml' or 'default', not {default_source!r}")
    out = _Problems(rel_path)
    split = _split_path(rel_path, checks_dir, out)
    if split is not None:
        namespace, table, file_name, stem = split
        name = f"{namespace}.{table}/{stem}"
    else:
        namespace = table = file_name = stem = ""
        name = rel_path
    label = f"check {name}"

    if text.startswith("\ufeff"):
        text = text[1:]
    text = text.replace("\r\n", "\n")
    if "\x00" in text:  # in a literal it would stop the build; the header's escapes are read below
        out.add(f"{label}: the file {NUL_PROBLEM}.", text.count("\n", 0, text.index("\x00")) + 1)

    header_end, header_lines, values, key_lines = _read_header(text, out, label)

    # -- on_failure and description -------------------------------------------
    on_failure, source = default_on_failure, default_source
    on_failure_line = 0
    if "on_failure" in values:
        value = values["on_failure"]
        on_failure_line = key_lines.get("on_failure", 1)
        if value in ON_FAILURE_VALUES:
            on_failure, source = value, "header"
        else:
            shown = f"'{value}'" if isinstance(value, str) else ("nothing" if value is None
                                                                 else str(value).lower())
            out.add(f"{label}: on_failure {shown} is not accepted; write block, warn or keep",
                    on_failure_line)
    description = values.get("description")
    if description is not None and not isinstance(description, str):
        out.add(f"{label}: the header's description is not text; write it as a string",
                key_lines.get("description", 1))
        description = None
    elif description is not None and "\x00" in description:
        out.add(f"{label}: the header's description {NUL_PROBLEM}", key_lines.get("description", 1))

    # -- the SQL -----------------------------------------------------------------
    sql_part = text[header_end:]
    masked = re.sub(r"[^\n]", " ", text[:header_end]) + sql_part
    first_sql_line = header_lines if header_end else 1
    if sql_part.strip():
        offset = len(sql_part) - len(sql_part.lstrip())
        first_sql_line = text.count("\n", 0, header_end + offset) + 1
    sql = ""
    if out.header_unclosed:
        pass  # everything after line 1 is the unclosed header; there is no SQL to judge
    elif not sql_part.strip():
        out.add(f"{label} holds no SQL{' after its header' if header_end else ''}; a check is one "
                "SELECT that returns the rows that are wrong", max(first_sql_line, 1))
    else:
        statements, dialect, error = _parse_sql(masked)
        if statements is None:
            desc, (line, col) = parse_problem(error), parse_position(error)  # type: ignore[arg-type]
            where = f" (line {line}, column {col})" if line else ""
            out.add(f"{label}: the SQL does not parse{where}: {desc}; write one SELECT that "
                    "returns the rows that are wrong", line or first_sql_line)
        else:
            starts, trailing = _statement_starts(masked, dialect)
            if starts:
                first_sql_line = starts[0][0]
            if not statements:
                out.add(f"{label} holds only comments; a check is one SELECT that returns the "
                        "rows that are wrong", first_sql_line)
            elif len(statements) > 1:
                line, col = starts[1] if len(starts) > 1 else (first_sql_line, 0)
                # on the first statement's own line, the line alone would say to remove the check too
                at = f"line {line}, column {col}" if col and line == starts[0][0] else f"line {line}"
                out.add(f"{label} holds {len(statements)} statements; a check is exactly one "
                        f"SELECT, so remove everything from {at} on or move it to a "
                        "check file of its own", line)
            else:
                stmt = statements[0]
                for reading in [stmt, *other_readings(masked, stmt)]:  # as each engine reads it
                    judged = _Problems(out.path)
                    _check_statement(reading, label, namespace, table, first_sql_line, judged, split is not None)
                    out.items += [p for p in judged.items if p not in out.items]
                for at, sentence in refused_sigils(masked, stmt, 1, dialect):
                    out.add(f"{label} {sentence}", at)
            chars = list(masked)
            for tok in trailing:
                chars[tok.start:tok.end + 1] = [" "] * (tok.end + 1 - tok.start)
            sql = "".join(chars)[header_end:].strip()

    if out.items or split is None:
        return None, out.items
    return (
        SqlCheck(
            name=name,
            namespace=namespace,
            table=table,
            file_name=file_name,
            path=rel_path,
            sql=sql,
            on_failure=on_failure,
            on_failure_source=source,
            description=description,
            header_line_count=header_lines,
            on_failure_line=on_failure_line,
            sql_line=first_sql_line,
        ),
        [],
    )


def _check_statement(stmt: exp.Expression, label: str, namespace: str, table: str, line: int,
                     out: _Problems, path_ok: bool) -> None:
    if not isinstance(stmt, (exp.Select, exp.SetOperation, exp.Subquery)):
        kind = stmt.key.upper() if isinstance(stmt, exp.Expression) else "statement"
        if isinstance(stmt, exp.Command):
            kind = str(stmt.this).upper()
        article = "an" if kind[:1] in "AEIOU" else "a"
        what = (f"{article} {kind} statement" if kind not in ("ALIAS", "COLUMN")
                else "not a statement")
        out.add(f"{label} is {what}; a check is one SELECT that returns the rows that are wrong",
                line)
        return
    for node in stmt.walk():
        if isinstance(node, _WRITES):
            what = ("SELECT ... INTO, which creates a table" if isinstance(node, exp.Into)
                    else f"{'an' if node.key[:1] in 'aeiou' else 'a'} {node.key.upper()} "
                         "inside it")
            out.add(f"{label} holds {what}; a check only reads, so write a plain SELECT", line)
            return
    # Functions that read host files, the environment or the network, or write state (sqlguard.py).
    refused = list(refused_calls(stmt, line))
    for at, sentence in refused:
        out.add(f"{label} {sentence}", at)
    if refused:
        return
    if not path_ok:
        return
    refs = _table_references(stmt)
    ns, tb = namespace.lower(), table.lower()
    for db, name in refs:
        if name.lower() == tb and (not db or db.lower() == ns):
            return
    read = ", ".join(f"{db}.{name}" if db else name for db, name in refs) or "no table"
    out.add(f"{label} does not read its own table {namespace}.{table} (it reads {read}); a check "
            f"of a table selects from it, as {namespace}.{table} or {table}", line)


# --------------------------------------------------------------------------- table-level rules


def check_table_limits(checks: Iterable[SqlCheck]) -> list[Problem]:
    """Refusals over all SQL checks of a project: more than 50 checks on one table, and two
    checks whose names differ only in letter case (they would be one file on a
    case-insensitive file system and one name to ``assay check rows``)."""
    by_table: dict[tuple[str, str], list[SqlCheck]] = {}
    by_name: dict[str, list[SqlCheck]] = {}
    for c in checks:
        by_table.setdefault((c.namespace, c.table), []).append(c)
        by_name.setdefault(c.name.lower(), []).append(c)
    problems: list[Problem] = []
    for (ns, tb), group in sorted(by_table.items()):
        if len(group) > MAX_SQL_CHECKS_PER_TABLE:
            group = sorted(group, key=lambda c: c.path)
            extra = group[MAX_SQL_CHECKS_PER_TABLE]
            problems.append(Problem(
                SQL_CHECKS_INVALID,
                f"table {ns}.{tb} has {len(group)} SQL checks, more than the "
                f"{MAX_SQL_CHECKS_PER_TABLE} a table may have; merge checks that look at the "
                "same rows into one",
                0,
                extra.path,
            ))
    for _, group in sorted(by_name.items()):
        if len(group) > 1:
            group = sorted(group, key=lambda c: c.path)
            problems.append(Problem(
                SQL_CHECK_INVALID,
                f"the check files {', '.join(c.path for c in group)} differ only in letter case; "
                "give each check a name of its own",
                0,
                group[1].path,
            ))
    return problems


def count_sql(check: Union[SqlCheck, str], whole_row: str = "*") -> str:
    """The count query of a check: ``SELECT COUNT(<whole_row>) FROM (<check>) AS assay_check``.

    `whole_row` is the engine's JSON of the row ``assay_check`` (the dbt package's `row_json`, the
    SQLMesh macros' `row_json_sql`), so the engine computes every column the check returns, as
    keeping its rows does: an engine skips a column a bare ``count(*)`` does not read, and a check
    whose select list fails on a row was counted, then failed where its rows were kept (decision
    1136). The dbt package's `_sql_check_count_sql` writes the same query. The check's SQL sits on
    lines of its own, so a trailing ``--`` comment cannot swallow the closing parenthesis. Zero is
    ``passed``; more is ``failed`` (block, keep) or ``warned``.
    """
    sql = check.sql if isinstance(check, SqlCheck) else check.strip().rstrip(";").rstrip()
    return f"SELECT COUNT({whole_row}) FROM (\n{sql}\n) AS assay_check"


_INCREMENTAL = ("incremental", "snapshot", "scd_type_2")
_NO_DATA = ("view", "ephemeral", "embedded")


def refuse_keep(check: SqlCheck, materialization: str) -> Optional[Problem]:
    """The refusal of ``on_failure: keep`` on a check whose table cannot be kept, or ``None``.

    ``materialization`` is the dbt materialization or SQLMesh model kind of the checked table
    (any case): an incremental one (``incremental``, ``INCREMENTAL_BY_*``, dbt ``snapshot``,
    ``SCD_TYPE_2*``, which only ever add rows, so the failed rows would stay) or one that holds
    no data (``view``, dbt ``ephemeral``, SQLMesh ``EMBEDDED``). A table the project only reads
    and a ``table``/``FULL`` model may be kept.
    """
    if check.on_failure != "keep":
        return None
    m = (materialization or "").strip().lower()
    line = check.on_failure_line or 1
    label = f"check {check.name}"
    if m.startswith(_INCREMENTAL):
        return Problem(
            SQL_CHECK_INVALID,
            f"{label} keeps its table on failure (on_failure: keep), but {check.qualified_table} "
            f"is an incremental model{'' if m == 'incremental' else f' ({m})'}: building it "
            "again only adds rows, so the failed rows would stay; "
            "write on_failure: block or warn",
            line,
            check.path,
        )
    if m in _NO_DATA:
        return Problem(
            SQL_CHECK_INVALID,
            f"{label} keeps its table on failure (on_failure: keep), but {check.qualified_table} "
            f"is a {m} and holds no data to keep; write on_failure: block or warn",
            line,
            check.path,
        )
    return None
