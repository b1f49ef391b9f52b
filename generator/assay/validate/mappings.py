"""Refusals about mappings: target, paths, transforms, field rules, freshness, redaction."""

from __future__ import annotations

import re
from typing import Optional

from ..duration import Duration
from ..errors import Diagnostic
from ..ir.model import BRONZE_ROW_ALIAS, INGESTION_COLUMNS, STEP_COLUMN_PREFIX
from ..spec.standins import key_unread
from ..spec.transforms import output_type, parse_step
from ..identifiers import IDENTIFIER_RULE, is_identifier
from ..redaction import intersects
from .names import shown
from .context import Context, did_you_mean
from .dispositions import disposition_problem
from .types import compare_bounds, is_numeric, is_temporal, normalize_type, parse_bound

PATH = re.compile(r"^\$\.([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\Z")
CODEPOINT = re.compile(r"^U\+([0-9A-Fa-f]{4,6})(?:-U\+([0-9A-Fa-f]{4,6}))?\Z")
def parse_path(path: str) -> tuple[str, ...] | None:
    m = PATH.match(path)
    if not m:
        return None
    rest = tuple(p for p in m.group(2).split(".") if p)
    return (m.group(1),) + rest


def path_problem(text: str, what: str, column_only: bool = False) -> str:
    """Why `text` (a mapping's `from:` or `unmapped:` entry) is no path, and what to write. A name
    a path cannot hold (a space, a dash, a non-ASCII letter: `$.issue date`, `$.größe`) is said as
    such, with the way around it (an outside tester, session 45, read only "write `$.<bronze
    column>`" of a path that was one)."""
    shape = "`$.<bronze column>`" + ("" if column_only else " or `$.<json column>.<key>`")
    parts = text[2:].split(".") if text.startswith("$.") and "[" not in text else []  # `[0]`: no array reads
    odd = sorted({c for part in parts for c in part if not (c.isascii() and (c.isalnum() or c == "_"))})
    if parts and all(parts) and odd and not (column_only and len(parts) > 1):
        shown_chars = ", ".join(repr(c) for c in odd)
        return (f"{what} names a column or key with characters a path cannot hold ({shown_chars}): each name in a path "
                "is ASCII letters, digits and `_`, not starting with a digit. Rename it in a view over the bronze table "
                "(a JSON key: extract it there into a column of its own) and read the view (`source:`).")
    return f"{what} is not a {'column ' if column_only else ''}path; write {shape}."


def check_mappings(ctx: Context) -> None:
    names: dict[tuple[str, str], str] = {}
    for file, m in ctx.mappings:
        _check_mapping(ctx, file, m)
        mname = m.name or m.source
        ident = (m.target, mname)
        if ident in names:
            ctx.report(file, m.line("source"), f"two mappings into `{m.target}` are both named `{mname}` (the other is in {names[ident]}); give one a `name:`.")
        names[ident] = file
    for name, (file, ent) in sorted(ctx.entities.items()):
        if not ctx.mappings_of(name) and name not in ctx.loaded.fed_entities:
            ctx.report(file, ent.line(), f"no mapping feeds entity `{name}`; add a `mapping_version: 1` document with `target: {name}`.")


def _check_mapping(ctx: Context, file: str, m) -> None:
    ent = ctx.entity(m.target)
    where = f"mapping `{m.name or m.source}` into `{m.target}`"
    if ent is None and m.target in ctx.loaded.known_entities:
        # The entity is named in a document that does not parse (its problems are reported
        # there): what the mapping says by itself is still judged, what it says against the
        # entity cannot be (decision 0028, second amendment: every problem at once).
        _check_mapping_alone(ctx, file, m, where)
        return
    if ent is None:
        ctx.report(file, m.line("target"), f"mapping targets `{m.target}`, which is not a declared entity.{did_you_mean(m.target, ctx.entities, listed=True)}")
        return
    _check_source(ctx, file, m, where)
    # key entries; an entity key naming undeclared columns is refused on the entity, and
    # comparing a mapping against it would only echo that refusal.
    key_ok = all(k in ent.fields for k in ent.key) and not key_unread(m.key)
    for col in m.key if key_ok else ():
        if col not in ent.key:
            ctx.report(file, m.key[col].line() or m.line("key"), f"{where} maps `{col}` under `key:`, and the key of `{m.target}` is ({', '.join(ent.key)}); move it to `fields:` or fix the entity key.")
    for col in ent.key if key_ok else ():
        if col not in m.key:
            ctx.report(file, m.line("key"), f"{where} does not map key column `{col}`; add `{col}: {{from: \"$.<bronze column>\"}}` under `key:`.")
    for col in m.fields:
        if col in m.key:
            ctx.report(file, m.fields[col].line(), f"{where} maps `{col}` under both `key:` and `fields:`; keep it under `key:`.")
        elif col not in ent.fields:
            ctx.report(file, m.fields[col].line() or m.line("fields"), f"{where} maps `{col}`, which `{m.target}` does not declare.{did_you_mean(col, ent.fields)} Declare it on the entity or remove it.")
    for col, fld in ent.fields.items():
        if fld.required and col not in m.fields and col not in m.key and col not in ent.key:
            ctx.report(file, m.line("fields") or m.line(), f"{where} does not map `{col}`, which `{m.target}` declares `required: true`; map it or drop `required`.")
    # paths and chains
    read_columns: set[str] = set()
    read_paths: list[tuple[tuple[str, ...], str]] = []  # (path, field) for the redaction check
    for section in ("key", "fields"):
        for col, fm in getattr(m, section).items():
            path = parse_path(fm.from_)
            if path is None:
                ctx.report(file, fm.line("from"), path_problem(fm.from_, f"`from: {fm.from_}` of `{col}`"))
            else:
                read_columns.add(path[0])
                read_paths.append((path, col))
            steps = []
            for i, raw in enumerate(fm.transform):
                step, problem = parse_step(raw)
                if problem:
                    ctx.report(file, fm.line("transform"), f"transform {i + 1} of `{col}` in {where}: {problem}")
                elif step is not None:
                    steps.append(step)
            ctx.keep(fm, "source", (path, tuple(steps)))
            if col in ent.fields:
                _check_field_rules(ctx, file, where, m, ent, col, fm, steps)
    unmapped_cols = set()
    unmapped_list = []
    for path in m.unmapped:
        p = parse_path(path)
        if p is None or len(p) != 1:
            ctx.report(file, m.line("unmapped"), path_problem(str(path), f"unmapped entry `{path}` of {where}", column_only=True))
        else:
            unmapped_cols.add(p[0])
            unmapped_list.append(p[0])
    ctx.keep(m, "unmapped", tuple(sorted(unmapped_list)))
    # `unmapped:` lists the bronze columns no field reads; one a field reads whole is listed there by
    # mistake (an outside tester's `$.phone`, session 37). A warning: it changes no row. The
    # ingestion metadata is named there by convention whether or not a field reads it.
    whole = {path[0]: col for path, col in read_paths if len(path) == 1}
    for c in sorted(set(unmapped_list) & set(whole) - set(INGESTION_COLUMNS)):
        ctx.out.append(Diagnostic(file, m.line("unmapped"), f"`$.{c}` is listed under `unmapped:` of {where}, and field "
                                  f"`{whole[c]}` reads it; take it out of `unmapped:`, which lists the bronze columns "
                                  "no field reads.", "SPEC_UNMAPPED_READ", severity="warning"))
    # bronze column names that assay's own SQL reads beside bronze's columns (sentences end alike)
    reserved = {BRONZE_ROW_ALIAS: "the name a reject row's `raw` payload reads the whole bronze row by; the column would be read instead of the row"}
    reserved.update((c, f"names that start with `{STEP_COLUMN_PREFIX}` are the columns assay computes a field's transforms in, "
                        "beside bronze's own (decision 1163)")
                    for c in read_columns | unmapped_cols if c.lower().startswith(STEP_COLUMN_PREFIX))
    for c, why in sorted(reserved.items()):
        if c not in read_columns | unmapped_cols:
            continue
        reading = [fm.line("from") for fm in list(m.key.values()) + list(m.fields.values()) if (parse_path(fm.from_) or ("",))[0] == c]
        sep = ", " if c == BRONZE_ROW_ALIAS else "; "
        ctx.report(file, min(reading) if reading else m.line("unmapped"),
                   f"{where} names the bronze column `{c}`{sep}{why}. Rename the column in bronze (or load it under another name).")
    # ingestion metadata and redaction
    needs_meta = ent.dedupe is not None or ent.quarantine is not None
    named = read_columns | unmapped_cols
    missing = [c for c in INGESTION_COLUMNS if c not in named]
    if needs_meta and missing:
        ctx.report(
            file,
            m.line("unmapped") or m.line(),
            f"`{m.target}` declares {'`dedupe:`' if ent.dedupe is not None else '`quarantine:`'}, which needs the bronze ingestion metadata, and {where} does not name {', '.join('`$.' + c + '`' for c in missing)}; add {'them' if len(missing) > 1 else 'it'} to `unmapped:`.",
        )
    if ent.quarantine is not None:
        _check_redaction(ctx, file, m, ent, where, read_paths)
    # freshness
    if m.freshness is not None:
        f = m.freshness
        if ent.dedupe is None and ent.quarantine is None:
            ctx.report(file, m.line("freshness"), f"{where} declares `freshness`, and `{m.target}` has neither `dedupe:` nor `quarantine:`, so bronze is not required to carry `_ingested_at`, the column freshness reads. Add `quarantine: {{retention: 90d}}` (or `dedupe:`) to the entity, or remove `freshness`.")
        _check_thresholds(ctx, file, m, where)


def _check_redaction(ctx: Context, file: str, m, ent, where: str, read_paths) -> None:
    """A redaction may not intersect a path the mapping reads (decision 0943): replay re-runs the
    mapping against `raw`, so a field reading the redacted value, something inside it, or a
    document holding it would read other data than it was judged on."""
    for path in ent.quarantine.redact:
        p = parse_path(path)
        hits = [(read, col) for read, col in read_paths if p is not None and intersects(p, read)]
        if not hits:
            continue
        reads = ", ".join(f"`{col}` from `$.{'.'.join(read)}`" for read, col in hits)
        if len(p) == 1:
            fix = "Redact only columns no mapping reads"
        elif any(len(read) < len(p) for read, _ in hits):
            fix = "Redact only keys inside no document a field reads whole (map the keys it needs one by one)"
        else:
            fix = "Redact only keys no field reads"
        ctx.report(
            ctx.entities[m.target][0],
            ent.quarantine.line("redact"),
            f"redact path `{path}` of `{m.target}` intersects what {where} ({file}) reads: {reads}; replay would have nothing to re-run. {fix}, and mark published columns with `classification:` instead.",
        )


def _check_source(ctx: Context, file: str, m, where: str) -> None:
    if not is_identifier(m.source):
        ctx.report(file, m.line("source"), f"{where} reads {shown(m.source)}; write the bare name of a bronze relation ({IDENTIFIER_RULE}); its schema is `schemas.bronze` of assay.yml.")


def _check_mapping_alone(ctx: Context, file: str, m, where: str) -> None:
    """What a mapping can be judged on without its entity: its bronze relation, paths, transform
    steps, `unmapped:` paths and freshness thresholds."""
    _check_source(ctx, file, m, where)
    for section in ("key", "fields"):
        for col, fm in getattr(m, section).items():
            if parse_path(fm.from_) is None:
                ctx.report(file, fm.line("from"), path_problem(fm.from_, f"`from: {fm.from_}` of `{col}`"))
            for i, raw in enumerate(fm.transform):
                _step, problem = parse_step(raw)
                if problem:
                    ctx.report(file, fm.line("transform"), f"transform {i + 1} of `{col}` in {where}: {problem}")
    for path in m.unmapped:
        p = parse_path(path)
        if p is None or len(p) != 1:
            ctx.report(file, m.line("unmapped"), path_problem(str(path), f"unmapped entry `{path}` of {where}", column_only=True))
    if m.freshness is not None:
        _check_thresholds(ctx, file, m, where)


def _check_thresholds(ctx: Context, file: str, m, where: str) -> None:
    f = m.freshness
    if f.warn_after is None and f.error_after is None:
        ctx.report(file, m.line("freshness"), f"`freshness` of {where} has no threshold; write `warn_after:` and/or `error_after:` such as `6h`, `1d`.")
    if f.warn_after and f.error_after and Duration(f.error_after).hours < Duration(f.warn_after).hours:
        ctx.report(file, f.line("error_after"), f"`error_after: {f.error_after}` of {where} is shorter than `warn_after: {f.warn_after}`; an error threshold cannot come before the warning. Make `error_after` at least `{f.warn_after}`.")


# The types a range's bounds may be read as when the column's own type does not parse: a number,
# then a timestamp, then a date (the three orderable families).
BOUND_STAND_INS = ("int", "timestamp", "date")


def check_bounds(ctx: Context, file: str, node, what: str, column_type: str) -> dict:
    """The `min` and `max` of `node` (a range rule, an `assert:` clause) read as values of a number,
    date or timestamp column: {key: exact text}; a bound that is none, and bounds no value
    satisfies, are reported where they are written."""
    bounds = {}
    for key in ("min", "max"):
        value = getattr(node, key)
        if value is None:
            continue
        text, bad = parse_bound(value, column_type)
        if bad:
            ctx.report(file, node.line(key), f"`{key}` of {what}: {bad}.")
        else:
            bounds[key] = text
    if "min" in bounds and "max" in bounds and not compare_bounds(bounds["min"], bounds["max"], column_type):
        ctx.report(file, node.line("max"), f"{what} has `min: {node.min}` above `max: {node.max}`, which no value satisfies; swap them.")
    return bounds


def _check_bound_order(ctx: Context, file: str, rule, what: str) -> None:
    """Refuse `min` above `max` of a range on a column whose type is unknown, when both bounds read
    as one orderable family; bounds that read as none are left to be judged once the type parses."""
    if rule.min is None or rule.max is None:
        return
    for stand_in in BOUND_STAND_INS:
        (lo, bad_lo), (hi, bad_hi) = parse_bound(rule.min, stand_in), parse_bound(rule.max, stand_in)
        if not bad_lo and not bad_hi:
            if not compare_bounds(lo, hi, stand_in):
                ctx.report(file, rule.line("max"), f"{what} has `min: {rule.min}` above `max: {rule.max}`, which no value satisfies; swap them.")
            return


def _check_field_rules(ctx: Context, file: str, where: str, m, ent, col: str, fm, steps) -> None:
    column_type = normalize_type(ent.fields[col].type) or "string"
    # A type that does not parse is reported at the field; judging the rules against a guessed
    # type would add problems that are not there (decision 0028).
    type_known = not ent.fields[col].type or normalize_type(ent.fields[col].type) is not None
    chain_type = output_type(tuple(steps))
    order_cols = set()
    if ent.dedupe is not None:
        order_cols = {ent.dedupe.field, *(ent.dedupe.tie_break or [])}
    has_enum = any(s.name == "enum_map" for s in steps)
    for i, rule in enumerate(fm.quality):
        line = rule.line() or fm.line("quality")
        what = f"rule `{rule.rule}` on `{col}` in {where}"
        problem = disposition_problem(rule.on_fail, what)
        if problem:
            ctx.report(file, rule.line("on_fail") if rule.on_fail else line, problem)
        kind = rule.rule
        if kind == "coercible" and col in order_cols and rule.on_fail in ("flag", "quarantine"):
            ctx.report(
                file,
                rule.line("on_fail"),
                f"{what} is `{rule.on_fail}`, and `{col}` orders the dedupe of `{m.target}`; a value that does not cast there leaves the winner undefined (DedupeDispositionConflict). Write `on_fail: fail` or remove the rule (assay then generates it at `fail`).",
            )
        if kind == "range":
            if rule.min is None and rule.max is None:
                ctx.report(file, line, f"{what} has neither `min` nor `max`; write at least one bound.")
            if not type_known:
                # The field's type is refused at the field; bounds that are out of order whatever
                # the column holds are still a problem of their own (decision 0948).
                _check_bound_order(ctx, file, rule, what)
                continue
            if not (is_numeric(column_type) or is_temporal(column_type)):
                ctx.report(file, line, f"{what} compares values, and `{col}` is {column_type}; a range applies to numbers, dates and timestamps. Use `length` or `in_set` for text.")
                continue
            ctx.keep(rule, "bounds", check_bounds(ctx, file, rule, what, column_type))
        elif kind == "length":
            if rule.min is None and rule.max is None:
                ctx.report(file, line, f"{what} has neither `min` nor `max`; write at least one bound.")
            if rule.min is not None and rule.max is not None and rule.min > rule.max:
                ctx.report(file, rule.line("max"), f"{what} has `min: {rule.min}` above `max: {rule.max}`, which no value satisfies; swap them.")
            _require_text(ctx, file, line, what, col, column_type if type_known else None)
        elif kind == "pattern":
            _require_text(ctx, file, line, what, col, column_type if type_known else None)
            from ..spec.pattern import check_pattern

            for p in check_pattern(rule.regex):
                ctx.report(file, rule.line("regex"), f"{what}: {p}", "PATTERN_UNPORTABLE")
        elif kind in ("normalize", "charset"):
            _require_text(ctx, file, line, what, col, column_type if type_known else None)
            if kind == "charset":
                given = [k for k in ("allow", "forbid") if getattr(rule, k) is not None]
                if len(given) != 1:
                    ctx.report(file, line, f"{what} states {' and '.join('`' + g + '`' for g in given) or 'neither `allow` nor `forbid`'}; write exactly one of `allow:` or `forbid:`.")
                ranges = []
                for g in given:
                    for item in getattr(rule, g):
                        cm = CODEPOINT.match(str(item))
                        if cm:
                            ranges.append((int(cm.group(1), 16), int(cm.group(2), 16) if cm.group(2) else int(cm.group(1), 16)))
                        if not cm:
                            ctx.report(file, rule.line(g), f"`{item}` in `{g}` of {what} is not a code point or range; write `U+0041` or `U+0041-U+005A`.")
                        elif cm.group(2) and int(cm.group(2), 16) < int(cm.group(1), 16):
                            ctx.report(file, rule.line(g), f"range `{item}` in `{g}` of {what} runs backwards; write the lower code point first.")
                        elif int(cm.group(cm.lastindex), 16) > 0x10FFFF:
                            ctx.report(file, rule.line(g), f"`{item}` in `{g}` of {what} is beyond U+10FFFF, the last code point.")
                if given:
                    ctx.keep(rule, "charset", (given[0], tuple(sorted(ranges))))
        elif kind == "in_enum":
            if not has_enum:
                ctx.report(file, line, f"{what} checks membership of the `enum_map` targets, and the chain of `{col}` has no `enum_map`; add `{{enum_map: [raw, mapped, ...]}}` to its transform or use `in_set`.")
        elif kind == "in_set":
            _check_set_values(ctx, file, rule, what, col, column_type)
    del chain_type


def _check_set_values(ctx: Context, file: str, rule, what: str, col: str, column_type: str) -> None:
    """A value of another type than the column's can never match, which reads as a rule that holds.
    On a string column a boolean or a fractional number is text YAML read as something else: an
    unquoted `yes` is compared as 'true' and `1.10` as '1.1' (an outside tester, session 45)."""
    if column_type == "string":
        misread = [v for v in rule.values if isinstance(v, (bool, float))]
        if misread:
            value = misread[0]
            read = "a boolean (from an unquoted yes, no, on, off, true or false)" if isinstance(value, bool) \
                else "a number (unquoted, `1.10` reads 1.1)"
            ctx.report(file, rule.line("values"),
                       f"{what} lists {value!r}, which YAML reads as {read}, and the string `{col}` would be "
                       f"compared with {str(value).lower()!r}; quote each value as the data spells it (`'yes'`, `'1.10'`).")
    if column_type in ("string", "variant"):
        return
    for value in rule.values:
        if column_type == "bool":
            ok = isinstance(value, bool)
        elif is_numeric(column_type):
            ok = not isinstance(value, bool) and parse_bound(value, column_type)[1] is None
            if ok and column_type == "int" and "." in str(value):
                ok = False
        else:
            ok = parse_bound(value, column_type)[1] is None
        if not ok:
            ctx.report(
                file,
                rule.line("values"),
                f"{what} lists {value!r}, which no {column_type} value of `{col}` can equal; write values of the column's type "
                f"(or compare the raw text in a string field).",
            )
            return


def _require_text(ctx: Context, file: str, line: int, what: str, col: str, column_type: Optional[str]) -> None:
    """A text rule on a column that is not text; nothing when the column's type is unknown (None)."""
    if column_type is not None and column_type != "string":
        ctx.report(file, line, f"{what} reads text, and `{col}` is {column_type}; apply it to a string column (map the raw text to a second string field if you need both).")
