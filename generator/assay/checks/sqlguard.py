"""What a SQL check file may not call: functions that read the host's files, environment or
network, write state, or run SQL held in a string (issue 21; docs/checks.md "What a check may call").

A check is one SELECT, run by the build with the build's own credentials. Being a SELECT does not
make it harmless: `pg_read_file('/etc/passwd')` or DuckDB's `read_text('~/.aws/credentials')`
return a host file as rows, which `assay check rows` then prints; `lo_from_bytea` and `nextval`
write although they sit in a SELECT. Where the engine has a read-only transaction the count runs
in one (docs/security.md), but no engine's read-only mode stops a file reader, so validation
refuses them by name, walking the parsed statement (never a regex over the text).

`REFUSED_FUNCTIONS` is the one list: (name, or prefix ending in `*`; the engine that has it; what
it does). A name is refused on every engine: a check file is not tied to one engine, and none of
these names is an ordinary function elsewhere. A table named by a string or by a name that is not
an identifier (`FROM 'orders.csv'`, `FROM "s3://bucket/x.parquet"`) is refused too: DuckDB reads
such a name as a file or URL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from ..identifiers import is_identifier

__all__ = ["REFUSED_FUNCTIONS", "TABLE_FUNCTIONS", "RefusedFunction", "refused_calls", "refused_sigils"]


@dataclass(frozen=True)
class RefusedFunction:
    """One refused function name (`pattern` ends in `*` for every name with that prefix)."""

    pattern: str
    engine: str
    does: str  # completes "a check may not call X, which ..."

    def matches(self, name: str) -> bool:
        """Whether the function called `name` (any case) is this one."""
        name = name.lower()
        return name.startswith(self.pattern[:-1]) if self.pattern.endswith("*") else name == self.pattern


_FILE = "reads files on the database server"
_DUCK_FILE = "reads files or URLs from the machine that runs the build"
_SQL = "runs SQL held in a string, which validation cannot see"

REFUSED_FUNCTIONS: tuple[RefusedFunction, ...] = (
    # PostgreSQL: server files and logs
    RefusedFunction("pg_read_file", "postgres", _FILE),
    RefusedFunction("pg_read_binary_file", "postgres", _FILE),
    RefusedFunction("pg_ls_*", "postgres", "lists directories on the database server"),
    RefusedFunction("pg_stat_file", "postgres", _FILE),
    RefusedFunction("pg_current_logfile", "postgres", _FILE),
    # PostgreSQL: state a SELECT can write
    RefusedFunction("lo_*", "postgres", "reads or writes large objects (lo_import and lo_export read and write server files)"),
    RefusedFunction("nextval", "postgres, duckdb", "advances a sequence (a write)"),
    RefusedFunction("setval", "postgres, duckdb", "sets a sequence (a write)"),
    RefusedFunction("set_config", "postgres", "changes a setting of the build's session"),
    RefusedFunction("pg_advisory*", "postgres", "takes locks that outlive the check"),
    RefusedFunction("pg_notify", "postgres", "sends a message to other sessions"),
    RefusedFunction("pg_logical_emit_message", "postgres", "writes to the write-ahead log"),
    RefusedFunction("pg_terminate_backend", "postgres", "ends another session"),
    RefusedFunction("pg_cancel_backend", "postgres", "cancels another session's query"),
    RefusedFunction("pg_reload_conf", "postgres", "reloads the server's configuration"),
    RefusedFunction("pg_sleep*", "postgres", "holds the build's transaction open"),
    # PostgreSQL: other connections and SQL in strings
    RefusedFunction("dblink*", "postgres", "runs SQL on another connection, outside the check's read-only transaction"),
    RefusedFunction("query_to_xml*", "postgres", _SQL),
    RefusedFunction("cursor_to_xml*", "postgres", _SQL),
    # DuckDB: files, URLs, the environment, settings
    RefusedFunction("read_text", "duckdb", _DUCK_FILE),
    RefusedFunction("read_blob", "duckdb", _DUCK_FILE),
    RefusedFunction("read_csv*", "duckdb", _DUCK_FILE),
    RefusedFunction("read_json*", "duckdb", _DUCK_FILE),
    RefusedFunction("read_ndjson*", "duckdb", _DUCK_FILE),
    RefusedFunction("read_parquet", "duckdb", _DUCK_FILE),
    RefusedFunction("parquet_*", "duckdb", _DUCK_FILE),
    RefusedFunction("read_xlsx", "duckdb", _DUCK_FILE),
    RefusedFunction("sniff_csv", "duckdb", _DUCK_FILE),
    RefusedFunction("glob", "duckdb", "lists files on the machine that runs the build"),
    RefusedFunction("delta_scan", "duckdb", _DUCK_FILE),
    RefusedFunction("iceberg_*", "duckdb", _DUCK_FILE),
    RefusedFunction("sqlite_*", "duckdb", _DUCK_FILE),
    RefusedFunction("postgres_*", "duckdb", "opens a connection to another database"),
    RefusedFunction("mysql_*", "duckdb", "opens a connection to another database"),
    RefusedFunction("st_read", "duckdb", _DUCK_FILE),
    RefusedFunction("getenv", "duckdb", "reads the build's environment variables (where secrets live)"),
    RefusedFunction("current_setting", "postgres, duckdb", "reads the engine's settings (paths, credentials)"),
    RefusedFunction("duckdb_secrets", "duckdb", "lists the engine's stored credentials"),
    RefusedFunction("which_secret", "duckdb", "reads the engine's stored credentials"),
    RefusedFunction("query", "duckdb", _SQL),
    RefusedFunction("query_table", "duckdb", _SQL),
    RefusedFunction("json_execute_serialized_sql", "duckdb", _SQL),
    # Added in session 40 (an outside security tester): every reader and every catalogue function
    # of DuckDB by prefix, its logging, profiling and checkpoint calls, Spark's calls into Java,
    # and PostgreSQL's file, replication and backup functions.
    RefusedFunction("read_*", "duckdb", _DUCK_FILE + " (read_duckdb opens another database file)"),
    RefusedFunction("duckdb_*", "duckdb", "reads the engine's catalogue: its settings, secrets, extensions and files"),
    RefusedFunction("pragma_*", "duckdb", "reads or changes the engine's settings"),
    RefusedFunction("enable_*", "duckdb", "turns on logging or profiling, which writes files on the machine that runs the build"),
    RefusedFunction("disable_*", "duckdb", "changes the engine's logging or profiling (a write of state)"),
    RefusedFunction("truncate_duckdb_logs", "duckdb", "deletes the engine's logs (a write)"),
    RefusedFunction("checkpoint", "duckdb", "writes the database file"),
    RefusedFunction("force_checkpoint", "duckdb", "writes the database file"),
    RefusedFunction("reflect", "spark", "calls a Java method of the engine's JVM (its environment, its files)"),
    RefusedFunction("try_reflect", "spark", "calls a Java method of the engine's JVM (its environment, its files)"),
    RefusedFunction("java_method", "spark", "calls a Java method of the engine's JVM (its environment, its files)"),
    RefusedFunction("pg_file_*", "postgres", "writes, renames or deletes files on the database server"),
    RefusedFunction("pg_logdir_ls", "postgres", "lists directories on the database server"),
    RefusedFunction("pg_create_*", "postgres", "creates replication slots or restore points (a write)"),
    RefusedFunction("pg_drop_replication_slot", "postgres", "drops a replication slot (a write)"),
    RefusedFunction("pg_copy_*", "postgres", "copies a replication slot (a write)"),
    RefusedFunction("pg_logical_slot_*", "postgres", "consumes a replication slot's changes (a write)"),
    RefusedFunction("pg_replication_*", "postgres", "changes replication state (a write)"),
    RefusedFunction("pg_switch_wal", "postgres", "switches the write-ahead log file (a write)"),
    RefusedFunction("pg_backup_*", "postgres", "starts or stops a backup (a write)"),
    RefusedFunction("pg_promote", "postgres", "promotes a standby server"),
    RefusedFunction("pg_rotate_logfile", "postgres", "rotates the server's log file (a write)"),
    RefusedFunction("pg_export_snapshot", "postgres", "exports a snapshot to other sessions"),
    RefusedFunction("pg_import_system_collations", "postgres", "writes the server's catalogue"),
    RefusedFunction("pg_log_backend_memory_contexts", "postgres", "writes another session's memory to the server log"),
)

#: The functions a check may read rows from (`FROM f(...)`): they compute rows from their arguments
#: and read nothing else. Any other function in a FROM is refused, whatever its name: an engine's
#: table functions are mostly readers of files, catalogues and other databases, and an extension
#: adds more of them than a list of names can follow (an outside tester found `read_duckdb` and
#: `enable_logging` missing from the list above).
TABLE_FUNCTIONS = ("generate_series", "range", "unnest", "json_each", "json_tree", "explode", "posexplode")


def _function_names(node: exp.Func) -> list[str]:
    """The names a call may have been written with: its own for an unknown function, sqlglot's
    spellings for one it knows (`read_parquet` parses as ReadParquet)."""
    if isinstance(node, exp.Anonymous):
        return [node.name]
    return [node.key, *type(node).sql_names()]


def _line(node: exp.Expression, default: int) -> int:
    for n in (node, node.args.get("this")):
        meta = getattr(n, "meta", None) or {}
        if isinstance(n, exp.Expression) and meta.get("line"):
            return int(meta["line"])
    return default


def refused_calls(stmt: exp.Expression, default_line: int,
                  only: str = "a check may only read the warehouse's tables") -> Iterator[tuple[int, str]]:
    """(line, sentence: what was called, why it is refused, what to do) for every refused function
    called and every file or URL read as a table in `stmt`, in the order they are written. `only`
    says what the text that calls it may do instead (a check file's; an expression rule's is
    narrower, and runs inside the build's own SELECT, so the same list applies to it)."""
    found: list[tuple[int, int, str]] = []
    for node in stmt.walk():
        if isinstance(node, exp.Func):
            names = _function_names(node)
            for rule in REFUSED_FUNCTIONS:
                hit = next((n for n in names if rule.matches(n)), None)
                if hit is not None:
                    line = _line(node, default_line)
                    shown = node.name if isinstance(node, exp.Anonymous) else hit.lower()
                    found.append((line, len(found), f"calls {shown}, which {rule.does}; {only}, so remove the call "
                                                    "(docs/checks.md lists the functions that are refused)"))
                    break
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Func):
            names = [n.lower() for n in _function_names(node.this)]
            by_name = any(rule.matches(n) for rule in REFUSED_FUNCTIONS for n in names)  # said once, below
            if not by_name and not any(n in TABLE_FUNCTIONS for n in names):
                line = _line(node.this, default_line)
                shown = node.this.name if isinstance(node.this, exp.Anonymous) else names[-1]
                found.append((line, len(found), f"reads rows from the function {shown}, which may read files, settings or "
                                                f"other databases; {only}, so read a table of the warehouse (the functions "
                                                f"a FROM may call are {', '.join(TABLE_FUNCTIONS)})"))
        elif isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier) and not is_identifier(node.name):
            line = _line(node.this, default_line)
            found.append((line, len(found), f"reads {node.name!r} as a table, which DuckDB takes for a file or URL; "
                                            "name a table of the warehouse instead (load the file into bronze first)"))
        elif isinstance(node, exp.RawString):
            # sqlglot writes a dollar-quoted string as a plain literal with its backslashes bare:
            # Spark reads `\'` there as an escaped quote, the literal ends early and the rest runs as
            # SQL validation never saw; SQLMesh renders a `{%` inside it as Jinja (session 40)
            found.append((_line(node, default_line), len(found),
                          "writes a dollar-quoted string ($$...$$ or $tag$...$tag$), which not every engine reads and "
                          "which assay cannot carry as data to each of them; write it as a '...' literal (a quote "
                          "inside doubled: 'it''s')"))
        elif isinstance(node, exp.Identifier) and any(mark in node.name for mark in _NAME_MARKS):
            # SQLMesh fills its variables into every name that holds `@`, quoted or not, and reads
            # `{{`, `{%`, `{#` in a model as Jinja (session 40)
            found.append((_line(node, default_line), len(found),
                          f"names {node.name!r}, which holds `@`, `{{{{`, `{{%` or `{{#`: SQLMesh substitutes its variables "
                          "(`@var`, `@{var}`) inside names and reads the others as Jinja; write a plain name"))
    for line, _, sentence in sorted(found):
        yield line, sentence


_NAME_MARKS = ("@", "{{", "{%", "{#")

# Tokens that stand for a value supplied from outside the text: `@name` (SQLMesh's macro sigil,
# DuckDB's abs), `$1`, `$name`, `?`.
_SIGIL_TOKENS = (TokenType.PARAMETER, TokenType.PLACEHOLDER)


def refused_sigils(text: str, tree: exp.Expression, default_line: int, dialect: str = "duckdb") -> Iterator[tuple[int, str]]:
    """(line, sentence) for every `@`, `$` parameter, `?` or `:name` written outside a string
    literal or comment. Nothing binds a parameter when the build runs, and an `@` is SQLMesh's
    macro syntax: where SQLMesh is imported, sqlglot parses `@x` as a macro, which assay would
    write into the model for SQLMesh to expand (elsewhere DuckDB reads it as abs). Judged on the
    tokens, so the verdict does not depend on what the process imported."""
    tokens = sqlglot.tokenize(text, read=dialect)
    pairs = [(t, nxt.text if nxt is not None and nxt.start == t.end + 1 else "") for t, nxt in zip(tokens, [*tokens[1:], None])]
    # `:name` is a colon and a name to the tokenizer, so the parse says which colon is a parameter
    # (a slice's is not).
    named = {":" + n.name for n in tree.walk() if isinstance(n, exp.Placeholder) and n.name}
    # The line from the token's offset: sqlglot's own line of `$1` before a comment is the next one.
    found = sorted({(default_line + text.count("\n", 0, t.start), t.text + nxt) for t, nxt in pairs
                    if t.token_type in _SIGIL_TOKENS or (t.token_type == TokenType.COLON and ":" + nxt in named)})
    for line, sigil in sorted(found):
        yield line, (f"writes {sigil} outside a string literal: SQLMesh reads `@` as its macro syntax and nothing binds "
                     "a query parameter (`$1`, `?`, `:name`) when the build runs; write the value as a literal "
                     "(`'@x'`), or `abs(x)` for an absolute value")
