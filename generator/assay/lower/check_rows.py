"""Which output columns of a SQL check file may carry a `pii` value (decision 0914), for both targets.

A SQL check file returns the rows that are wrong, and `assay check rows` shows them (decision
0532). The rows are kept as JSON of the query's own output, so leaving out the columns *named*
like a `pii` field is not enough: ``select full_name as who`` or ``upper(full_name)`` carries the
value under another name. Here the query's output is traced back to the columns it derives from,
with sqlglot's ``qualify`` (stars expanded from the spec's tables) and ``lineage`` (through
aliases, functions, CASE, CTEs, subqueries, set operations and joins):

- an output column is left out when any column it derives from is a private column of a
  relation the spec knows: a `pii` field of an entity (silver), or, in a bronze relation an
  entity maps from, a column a `pii` field is read from or one ``quarantine.redact`` names
  (privacy.py);
- it is left out too when its origin cannot be told: a column of a relation the spec does not
  know, a column sqlglot cannot attribute, a query sqlglot cannot trace (fail closed);
- it is kept when it derives only from known, non-private columns, or from no column at all (a
  literal, ``count(*)``);
- when the output's columns cannot be listed at all (a star over a relation the spec does not
  know, a query that does not parse), no row of the check is kept (``None``);
- and when the name an engine gives a private output cannot be known here (session 36, an
  outside tester): an output that is neither a column nor aliased (`ssn::varchar` is `ssn` to
  sqlglot and `CAST(ssn AS VARCHAR)` to DuckDB), two outputs of one name (the engine renames the
  second, `city_1`), a private name with a `.` (the row's redaction reads it as a path inside a
  JSON column), or a table alias with a column list (`from t as p(a, b)` renames t's columns, which
  the tracing does not follow).

Names are left out in every spelling an engine may give them (as written, lower and upper case),
since the row's JSON keys follow the engine's case folding.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, TypeVar

import sqlglot
from sqlglot import exp
from sqlglot.lineage import lineage
from sqlglot.optimizer.qualify import qualify

from ..ir.model import LINEAGE_TYPES, Entity, Project

_Known = TypeVar("_Known")  # what is known of a relation: a Relation, or its columns' types

#: The dialects a check file is read with, in order (as assay.checks.sqlfile.PARSE_DIALECTS).
DIALECTS: tuple[Optional[str], ...] = ("duckdb", "postgres", None)


@dataclass(frozen=True)
class Relation:
    """A relation the spec knows: the columns it is known to have and the private ones among them."""

    columns: tuple[str, ...]
    private: frozenset[str]


def known_relations(project: Project) -> dict[tuple[str, str], Relation]:
    """``(schema, table)`` -> Relation: every entity table in silver, every bronze relation an
    entity maps from (a column read into a `pii` field, or redacted, is private there)."""
    from ..privacy import pii_bronze_columns, pii_columns
    from ..redaction import columns as redaction_columns

    out: dict[tuple[str, str], Relation] = {}
    silver, bronze = project.schema("silver"), project.schema("bronze")
    for e in project.entities:
        # the table's lineage, flag and history columns too: unknown, they read as untraceable and
        # were left out of every kept row (`_load_id`, which finds the bad load: session 44)
        flags = ("_quality_flags",) if e.opted_in else ()
        out[(silver, e.name)] = Relation((*checked_row_types(e), *flags), pii_columns(e))
    sources: dict[str, tuple[set, set]] = {}
    for e in project.entities:
        # a column a redaction reaches inside is private whole here: a check's output column
        # carries the column's value, not the document minus the key
        private = set(redaction_columns(e.redact)) | pii_bronze_columns(e)
        for m in e.mappings:
            cols, priv = sources.setdefault(m.source, (set(), set()))
            cols.update(m.bronze_columns)
            cols.update(redaction_columns(e.redact))
            priv.update(private)
    for source, (cols, priv) in sources.items():
        out.setdefault((bronze, source), Relation(tuple(sorted(cols | priv)), frozenset(priv)))
    return out


def _parse(sql: str) -> tuple[Optional[exp.Expression], Optional[str]]:
    for dialect in DIALECTS:
        try:
            tree = sqlglot.parse_one(sql, read=dialect)
        except Exception:  # noqa: BLE001 - any dialect that cannot read it: try the next
            continue
        if isinstance(tree, exp.Query):
            return tree, dialect
    return None, None


def _lookup(relations: Mapping[tuple[str, str], _Known], table: exp.Table, defaults: Iterable[str]) -> Optional[_Known]:
    """The known relation a table reference names: ``schema.table``, or ``table`` alone in one of
    the ``defaults`` schemas (the check's own namespace first). A catalog-qualified name is
    matched on its schema and table."""
    name = table.name.lower()
    if table.db:
        return relations.get((table.db.lower(), name))
    for schema in defaults:
        if (schema.lower(), name) in relations:
            return relations[(schema.lower(), name)]
    return None


def private_outputs(sql: str, relations: Mapping[tuple[str, str], Relation],
                    default_schemas: Iterable[str] = ()) -> Optional[list[str]]:
    """The output names of ``sql`` that may carry a private value, sorted, in every spelling an
    engine may key them by; ``None`` when the output cannot be listed (keep no row).

    >>> rel = {("silver", "patient"): Relation(("patient_id", "full_name"), frozenset({"full_name"}))}
    >>> private_outputs("select patient_id, upper(p.full_name) as Shout from silver.patient p", rel)
    ['SHOUT', 'Shout', 'shout']
    >>> private_outputs("select * from elsewhere.t", rel) is None
    True
    """
    relations = {(s.lower(), t.lower()): r for (s, t), r in relations.items()}
    defaults = [d for d in default_schemas]
    tree, dialect = _parse(sql)
    if tree is None:
        return None
    if any(alias.columns for alias in tree.find_all(exp.TableAlias)):
        return None  # `as p(a, b)` renames a relation's columns: not traced
    written = [s.output_name for s in tree.selects] if not any(
        isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star)) for s in tree.selects) else []
    schema = _schema({key: r.columns for key, r in relations.items()})
    qualified = _qualified(tree, dialect, schema, defaults)
    if qualified is None:
        return None
    selects = qualified.selects
    if not selects or any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star))
                          for s in selects):
        return None
    names = [s.output_name for s in selects]
    if any(not n for n in names) or len({n.lower() for n in names}) != len(names):
        return None  # a repeated name is renamed by the engine (`city_1`), whatever it carries
    # outputs an engine may name otherwise than sqlglot does: neither a column (a star's too) nor aliased
    unnamed = {s.output_name.lower() for s in tree.selects if not isinstance(s, (exp.Alias, exp.Column, exp.Star))}
    private: set[str] = set()
    for name in dict.fromkeys(names):
        if not _traced_clean(name, qualified, schema, dialect, relations, defaults):
            if "." in name or name.lower() in unnamed:
                return None  # the engine's key of its value cannot be named here
            private.add(name)
    out: set[str] = set()
    for name in private:
        out |= set(_spellings(name))
        out |= {w for w in written if w and w.lower() == name.lower()}
    return sorted(out)


def _schema(columns: Mapping[tuple[str, str], Iterable[str]]) -> dict:
    """sqlglot's schema of the known relations ({schema: {table: {column: type}}}); every column
    reads as text: what is traced is where a value comes from, not its type."""
    schema: dict = {}
    for (s, t), cols in columns.items():
        schema.setdefault(s, {})[t] = {c.lower(): "text" for c in cols}
    return schema


def _qualified(tree: exp.Expression, dialect: Optional[str], schema: dict, defaults: list[str]) -> Optional[exp.Expression]:
    """``tree`` with every column qualified and every star of a known relation expanded, or None
    when sqlglot cannot qualify it (then nothing of it can be traced)."""
    try:
        return qualify(tree.copy(), schema=schema, dialect=dialect, db=defaults[0] if defaults else None,
                       validate_qualify_columns=False, quote_identifiers=False, identify=False)
    except Exception:  # noqa: BLE001 - a query sqlglot cannot qualify cannot be traced
        return None


def _spellings(name: str) -> tuple[str, str, str]:
    """An output name as written and as an engine that folds names to lower or upper case keys it."""
    return name, name.lower(), name.upper()


def _column_name(traced: str, dialect: Optional[str]) -> str:
    """The column a lineage leaf names (`person."ssn"`, `p.ssn`), unquoted and lower-cased: a
    quoted identifier compared as written (`"ssn"`) matched no pii column, and its values were kept
    (an outside tester, session 37). Engines that fold names read `"SSN"` as `ssn` too."""
    try:
        return exp.to_column(traced, dialect=dialect).name.lower()
    except Exception:  # noqa: BLE001 - not a column reference: compared without its quotes
        return traced.split(".")[-1].strip('"`[]').lower()


def _traced_clean(name: str, qualified: exp.Expression, schema: dict, dialect: Optional[str],
                  relations: Mapping[tuple[str, str], Relation], defaults: list[str]) -> bool:
    """Whether output ``name`` derives only from known, non-private columns (or from none)."""
    try:
        node = lineage(name, qualified, schema=schema, dialect=dialect)
    except Exception:  # noqa: BLE001 - untraceable: not clean
        return False
    for n in node.walk():
        if n.downstream:
            continue
        source = n.source
        if isinstance(source, exp.Table):
            relation = _lookup(relations, source, defaults)
            column = _column_name(n.name, dialect)
            if relation is None or column == "*" or column in {c.lower() for c in relation.private}:
                return False
            continue
        # A leaf that is not a table column: clean only when it reads no column at all (a
        # literal, count(*)); a column sqlglot could not attribute is not.
        if n.expression.find(exp.Column) is not None or n.expression.find(exp.Placeholder) is not None \
                or isinstance(n.expression, exp.Placeholder):
            return False
    return True


def sql_check_redaction(check, project: Project, entity: Optional[Entity] = None) -> Optional[list[str]]:
    """What ``assay check rows`` leaves out of the rows SQL check file ``check`` returned (both
    targets): the output columns that may carry a private value, with the entity's own
    redacted columns (``redacted_columns``) when the check is an entity's; ``None``: keep no
    row (the output cannot be traced)."""
    from .declared_checks import redacted_columns

    found = private_outputs(check.sql, known_relations(project), [check.namespace])
    if found is None:
        return None
    own = redacted_columns(entity) if entity is not None else []
    return sorted(set(found) | set(own))


# ---------------------------------------------------------------------------- the kept rows' types

#: The assay type of the columns every entity table has beside its fields is `LINEAGE_TYPES`
#: (ir/model.py); these are the flags' and the validity columns' of a type-2 entity as either target
#: names them (dbt's snapshot, SQLMesh's SCD model); the flags are an engine's array or text, which
#: every engine's JSON spells alike.
FLAG_TYPES = (("_quality_ok", "bool"),)
TYPE2_TYPES = (("valid_from", "timestamp"), ("valid_to", "timestamp"), ("dbt_valid_from", "timestamp"),
               ("dbt_valid_to", "timestamp"), ("dbt_updated_at", "timestamp"))


def checked_row_types(entity: Entity) -> dict[str, str]:
    """{column: assay type} of the rows a failing declared check on ``entity`` keeps (the entity's
    table: its fields, the lineage columns, the flags of an opted-in entity), in table order, for
    `assay check rows` to spell each value the same on every engine (decision 0952)."""
    out = {c.name: c.type for c in entity.columns}
    out.update(LINEAGE_TYPES)
    if entity.opted_in:
        out.update(FLAG_TYPES)
    if entity.scd == "type2":
        out.update(TYPE2_TYPES)
    if entity.materialized == "incremental":
        out["_processed_at"] = "timestamp"
    return out


def sql_check_row_types(check, project: Project) -> dict[str, str]:
    """{output column: assay type} of SQL check file ``check``'s outputs that pass one column of an
    entity's table through unchanged (renamed or not, through CTEs and subqueries), in output
    order, each under every spelling an engine may key it by. An output computed from a column
    (``upper(name)``, ``amount * 2``), read from bronze or from a table assay does not build has
    no type here: its value is shown as the engine wrote it (decision 0952)."""
    tree, dialect = _parse(check.sql)
    if tree is None:
        return {}
    silver = project.schema("silver").lower()
    typed = {(silver, e.name.lower()): {k.lower(): v for k, v in checked_row_types(e).items()} for e in project.entities}
    schema = _schema(typed)
    qualified = _qualified(tree, dialect, schema, [check.namespace])
    if qualified is None:
        return {}
    out: dict[str, str] = {}
    for select in qualified.selects:
        name = select.output_name
        found = _passed_through(name, qualified, schema, dialect, typed, [check.namespace]) if name else None
        if found is not None:
            for spelled in _spellings(name):
                out.setdefault(spelled, found)
    return out


def _passed_through(name: str, qualified: exp.Expression, schema: dict, dialect: Optional[str],
                    typed: Mapping[tuple[str, str], Mapping[str, str]], defaults: list[str]) -> Optional[str]:
    """The assay type of output ``name`` when it is one typed column passed through unchanged."""
    try:
        node = lineage(name, qualified, schema=schema, dialect=dialect)
    except Exception:  # noqa: BLE001 - untraceable: no type
        return None
    leaves = []
    for n in node.walk():
        if not n.downstream:
            leaves.append(n)
            continue
        inner = n.expression.this if isinstance(n.expression, exp.Alias) else n.expression
        if not isinstance(inner, exp.Column):
            return None  # computed: its type is the engine's
    if len(leaves) != 1 or not isinstance(leaves[0].source, exp.Table):
        return None
    types = _lookup(typed, leaves[0].source, defaults)
    return types.get(_column_name(leaves[0].name, dialect)) if types is not None else None


def kept_row_types(project: Project, table: str, check: str) -> dict[str, str]:
    """{column: assay type} of the rows check ``check`` (a declared check's id or a SQL check
    file's name, as the results record them) kept for ``table``: a SQL check file's pass-through
    outputs, or the entity's table for its declared checks; empty for a table assay only reads
    (its column types are the engine's, decision 0522)."""
    files = [c for e in project.entities for c in e.sql_checks] + list(project.sql_checks)
    for sql_check in files:
        if sql_check.name.lower() == check.lower():
            return sql_check_row_types(sql_check, project)
    entity = next((e for e in project.entities if e.name.lower() == table.lower()), None)
    return checked_row_types(entity) if entity is not None else {}
