"""Refusals about entities: names, keys, fields, dedupe, quarantine, row rules."""

from __future__ import annotations

import re

from ..errors import Diagnostic
from ..ir.model import BRONZE_ROW_ALIAS, INGESTION_COLUMNS, LINEAGE_TYPES
from ..spec.standins import UNREAD_TYPE, key_unread
from .context import Context, did_you_mean
from .dispositions import disposition_problem
from ..privacy import PII
from .expressions import (parse_expression, private_problems, qualified_columns, referenced_columns, type_mismatches,
                          unknown_functions)
from ..redaction import normalized
from .mappings import check_bounds, parse_path
from .types import SIMPLE_TYPES, TYPE_ADVICE, is_numeric, is_temporal, normalize_type

NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")  # the identifier rule, lower-case (decision 0900); used with fullmatch
RESERVED_FIELDS = ("_quality_flags", "_quality_ok", "_load_id", "_ingested_at", "_source_row_id", "has_quality_flags", "_mapping", BRONZE_ROW_ALIAS)
RESERVED_TYPE2 = ("valid_from", "valid_to")
# Models and tables assay generates beside the entities: an entity of the same name would be a
# second dbt model of that name (dbt refuses the project) or share its table.
RESERVED_ENTITY_NAMES = ("assay_check_results", "assay_check_rows", "assay_events", "mart_data_quality")


# SQL spellings people bring from elsewhere, and the assay type they mean. Floats have no
# assay type on purpose: quality bounds are exact decimals.
TYPE_ALIASES = {
    "integer": "int", "bigint": "int", "smallint": "int", "long": "int",
    "text": "string", "varchar": "string", "str": "string", "boolean": "bool",
    "datetime": "timestamp", "timestamptz": "timestamp", "json": "variant",
    "float": "decimal(38,9)", "double": "decimal(38,9)", "real": "decimal(38,9)", "numeric": "decimal(38,9)",
    "number": "decimal(38,9)", "decimal": "decimal(38,9)",
}


def _type_hint(text) -> str:
    alias = TYPE_ALIASES.get(str(text).strip().lower())
    return f" Did you mean `{alias}`?" if alias else did_you_mean(str(text).lower(), SIMPLE_TYPES)


def _reserved_list(scd: str) -> str:
    names = list(RESERVED_FIELDS) + (list(RESERVED_TYPE2) + ["dbt_*"] if scd == "type2" else [])
    return ", ".join(f"`{n}`" for n in names)


def check_entities(ctx: Context) -> None:
    for name, (file, ent) in sorted(ctx.entities.items()):
        _check_entity(ctx, file, name, ent)


def _check_entity(ctx: Context, file: str, name: str, ent) -> None:
    where = f"entity `{name}`"
    if len(name) > 63 and NAME.fullmatch(name[:63]):
        # the letters are right; only its length is not (an outside tester, session 45, was told to
        # write what the name already was)
        ctx.report(file, ent.line(), f"entity name `{name}` is {len(name)} characters, over the 63 PostgreSQL allows; shorten it to at most 55 (its `__staged` relation adds 8).")
    elif not NAME.fullmatch(name) or name.endswith("__reject") or "__" in name:
        ctx.report(file, ent.line(), f"entity name `{name}` is not allowed; write lower-case letters, digits and single `_`, starting with a letter.")
    if name in RESERVED_ENTITY_NAMES:
        ctx.report(file, ent.line(), f"entity name `{name}` is the name of a model or table assay generates "
                                  f"({', '.join(RESERVED_ENTITY_NAMES)}); choose another name.")
    # fields
    for col, fld in ent.fields.items():
        line = fld.line() or ent.line("fields")
        if col in RESERVED_FIELDS or (ent.scd == "type2" and (col in RESERVED_TYPE2 or col.startswith("dbt_"))):
            ctx.report(file, line, f"field `{col}` of {where} uses a name assay reserves for its own columns ({_reserved_list(ent.scd)}); rename the field.")
        elif len(col) > 63 and NAME.fullmatch(col[:63]):
            ctx.report(file, line, f"field `{col}` of {where} is {len(col)} characters, over the 63 PostgreSQL allows; shorten it.")
        elif not NAME.fullmatch(col):
            ctx.report(file, line, f"field `{col}` of {where} is not a column name; write lower-case letters, digits and `_`, starting with a letter.")
        if normalize_type(fld.type) is None and fld.type != UNREAD_TYPE:
            ctx.report(
                file,
                fld.line("type"),
                f"field `{col}` of {where} has type `{fld.type}`.{_type_hint(fld.type)} {TYPE_ADVICE}",
            )
        if fld.assert_ is not None:
            _check_assert(ctx, file, f"`assert` of field `{col}` of {where}", fld)
    # key
    seen = set()
    for i, k in enumerate(() if key_unread(ent.key) else ent.key):
        if k in seen:
            ctx.report(file, ent.line("key"), f"{where} names key column `{k}` twice; list each key column once.")
        seen.add(k)
        if k not in ent.fields:
            ctx.report(file, ent.line("key"), f"{where} has key column `{k}`, which is not one of its fields.{did_you_mean(k, ent.fields)} Declare it under `fields:` or fix the key.")
    # dedupe
    order_cols = []
    if ent.dedupe is not None:
        d = ent.dedupe
        if not d.tie_break:
            ctx.report(
                file,
                d.line(),
                f"{where} dedupes `latest_by` without `tie_break`; two rows with the same `{d.field}` would make the winner arbitrary. Write `tie_break: [_load_id]` (or columns that settle ties).",
            )
        for col, line in [(d.field, d.line("field"))] + [(c, d.line("tie_break")) for c in (d.tie_break or [])]:
            if col in INGESTION_COLUMNS:
                continue
            if col not in ent.fields:
                ctx.report(file, line, f"dedupe of {where} orders by `{col}`, which is neither a field nor ingestion metadata (`_ingested_at`, `_load_id`, `_source_row_id`).{did_you_mean(col, list(ent.fields) + list(INGESTION_COLUMNS), listed=True)}")
            else:
                order_cols.append(col)
    # quarantine
    if ent.quarantine is not None:
        # Dotted paths relative to `$.` (decision 0943): a whole column, or a key inside the
        # JSON document a column holds, removed from the reject row's `raw`.
        ctx.keep(ent.quarantine, "redact", normalized(p for p in (parse_path(x) for x in ent.quarantine.redact) if p))
        for i, path in enumerate(ent.quarantine.redact):
            if not re.match(r"^\$\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z", path):
                ctx.report(file, ent.quarantine.line("redact"), f"redact path `{path}` of {where} is not a path; write `$.<bronze column>` such as `$.email`, or `$.<json column>.<key>` such as `$.payload.ssn`.")
    # row rules
    expr_names = set()
    for i, rule in enumerate(ent.quality):
        rline = rule.line() or ent.line("quality")
        if rule.rule == "expression":
            what = f"expression rule `{rule.name}` of {where}"
            problem = disposition_problem(rule.on_fail, what)
            if problem:
                ctx.report(file, rline, problem)
            if rule.name in expr_names:
                ctx.report(file, rule.line("name"), f"{where} has two expression rules named `{rule.name}`; rule names are unique within an entity: give one another `name:`.")
            expr_names.add(rule.name)
            tree, problems = parse_expression(rule.expr)
            for p in problems:
                ctx.report(file, rule.line("expr"), f"{what}: {p}")
            if tree is not None:
                for sentence in unknown_functions(rule.expr) if not problems else ():  # a refused call says more
                    ctx.out.append(Diagnostic(file, rule.line("expr") or 1, f"{what} {sentence}", "SPEC_FUNCTION", severity="warning"))
                for q in qualified_columns(tree):
                    ctx.report(file, rule.line("expr"), f"{what} reads `{q}`; an expression reads only the entity's own columns, unqualified: write `{q.split('.')[-1]}`.")
                for col in referenced_columns(tree):
                    if col not in ent.fields and col not in INGESTION_COLUMNS:
                        ctx.report(file, rule.line("expr"), f"{what} reads column `{col}`, which {where} does not declare.{did_you_mean(col, ent.fields)}")
                private = frozenset(c for c, f in ent.fields.items() if f.classification == PII)
                for sentence in private_problems(tree, private) if not problems else ():
                    ctx.report(file, rule.line("expr"), f"{what} {sentence}")
                types = {**dict(LINEAGE_TYPES), **{c: normalize_type(f.type) or "" for c, f in ent.fields.items()}}
                for sentence in type_mismatches(tree, types) if not problems else ():
                    ctx.report(file, rule.line("expr"), f"{what}: `{rule.expr}` {sentence}: the engines judge that "
                               "differently or refuse it; compare values of one kind (a quoted text with a text field, a "
                               "bare number with a number field, a date as 'YYYY-MM-DD'), or declare the field with "
                               "the type its values have.")
        else:
            _check_referential(ctx, file, name, ent, rule, rline)
    # grants / owner are free text; nothing to refuse beyond grammar.


def _check_referential(ctx: Context, file: str, name: str, ent, rule, line: int) -> None:
    where = f"referential rule via `{rule.via}` of entity `{name}`"
    found = ctx.relationships.get(rule.via)
    if found is None and rule.via in ctx.loaded.known_relationships:
        return  # declared, with its own grammar problems already reported
    if found is None:
        ctx.report(file, rule.line("via"), f"{where} names a relationship that is not declared.{did_you_mean(rule.via, ctx.relationships)} Declare it under `relationships:`.")
        return
    rel = found[1]
    if rel.from_ != name:
        ctx.report(file, rule.line("via"), f"{where} uses a relationship that starts at `{rel.from_}`; a referential rule belongs on the entity its relationship starts from. Move the rule to `{rel.from_}`, or declare a relationship with `from: {name}`.")
        return
    if rel.to == name:
        ctx.report(
            file,
            rule.line("via"),
            f"{where} points the entity at itself; assay judges a child against its parent's admitted rows, which a self-reference would read while they are being built. Model the parent as its own entity or check it with a `reconcile`.",
        )
    if rule.on_missing == "unknown_member":
        if len(rel.via) != 1:
            ctx.report(file, rule.line("on_missing"), f"{where} uses `on_missing: unknown_member`, which needs a single foreign key column, and `{rel.name}` joins on {len(rel.via)}; use `on_missing: quarantine` or `flag`.")
        else:
            fk = next(iter(rel.via))
            fld = ent.fields.get(fk)
            # A type that does not parse is reported at its field, not judged here (decision 0028).
            if fld is not None and normalize_type(fld.type) not in ("string", None):
                ctx.report(file, rule.line("on_missing"), f"{where} uses `on_missing: unknown_member`, which rewrites the key to the text `__unknown__`, and `{fk}` is {fld.type}; make it a string column or use `on_missing: quarantine` or `flag`.")
            elif fk in (ent.key or []):
                # Dedupe runs before the rules, on the delivered keys: two orphans that differ
                # only in this column would both be kept and then share one rewritten key.
                ctx.report(file, rule.line("on_missing"), f"{where} uses `on_missing: unknown_member`, which rewrites `{fk}` to the text `__unknown__`, and `{fk}` is part of the key of `{name}`: two orphans that differ only there would publish one key twice. Use `on_missing: quarantine` or `flag`, or take `{fk}` out of `key:`.")


def _check_assert(ctx: Context, file: str, what: str, fld) -> None:
    """An `assert:` clause routes no row, but what it records is read as the field's contract
    (the column's metadata in dbt and SQLMesh): a bound that is no value of the field's type, or
    bounds no value satisfies, would record a contract nobody can hold to. `enum:` and `regex:` are
    recorded as written: no engine evaluates them."""
    a, column_type = fld.assert_, normalize_type(fld.type)
    if column_type is None or (a.min is None and a.max is None):
        return  # a type that does not parse is reported at the field's type
    if not (is_numeric(column_type) or is_temporal(column_type)):
        key = "min" if a.min is not None else "max"
        ctx.report(file, a.line(key), f"{what} has `{key}: {getattr(a, key)}`; a bound compares numbers, dates or timestamps, "
                                      f"and the field is {column_type}. Take the bound out, or use `enum:` or `regex:`.")
        return
    check_bounds(ctx, file, a, what, column_type)
