"""Refusals about declared checks (document 000) and SQL check files (document 002)."""

from __future__ import annotations

import re

from ..errors import Diagnostic
from ..spec.yamlload import locate
from .context import Context


def declared_checks_of(ctx: Context, file: str, owner: str, raw, columns, grain, default_line: int):
    """Validate one `checks:` list; report problems; return the normalized checks."""
    from ..checks.declared import validate_declared_checks

    if raw is None:
        return ()
    checks, problems = validate_declared_checks(raw, owner=owner, line_of=lambda path: locate(raw, path, default_line, tolerant=False)[2], columns=columns, grain=grain)
    for p in problems:
        ctx.report(file, p.line or default_line, p.message, p.code)
    return tuple(checks)


def check_budget_names(ctx: Context) -> None:
    """Each `checks.budgets` entry of assay.yml names an entity or a declared table (judged with
    the rest of the spec, not after it: a resolution-stage check ran only on an otherwise clean spec)."""
    checks = ctx.loaded.settings.checks
    known = set(ctx.entities) | set(ctx.loaded.known_entities) | {
        t for _f, doc, _r in ctx.loaded.table_docs for t in doc.tables}
    for name, b in sorted(checks.budgets.items()):
        if name not in known:
            ctx.report("assay.yml", b.line() or checks.line("budgets") or 1,
                       f"checks.budgets names `{name}`, which is no entity or declared table of the spec; write the name of "
                       f"one ({', '.join(sorted(known)) or 'the spec declares none'}), or remove the entry.", "SPEC_SETTINGS")


def check_declared(ctx: Context) -> dict:
    """All declared checks, by owner (entity name or schema.table)."""
    found: dict = {}
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.checks is not None:
            found[name] = declared_checks_of(ctx, file, name, ent.checks, set(ent.fields), list(ent.key), ent.line("checks"))
    for file, doc, _raw in ctx.loaded.table_docs:
        for tname, table in doc.tables.items():
            if tname.count(".") != 1:
                ctx.report(file, table.line() or doc.line("tables"), f"table `{tname}` is not `<schema>.<table>`; name the schema, e.g. `bronze.orders`.")
            owner = _entity_owning(ctx, tname)
            if owner is not None:
                # a table assay builds is judged as its entity's: checked as a table assay only
                # reads, its pii fields were measured and kept with their values (an outside tester)
                ctx.report(file, table.line() or doc.line("tables"),
                           f"table `{tname}` is entity `{owner}`'s own (assay builds it), not a table assay only reads; "
                           f"declare its checks under `checks:` of entity `{owner}`, where its pii fields are measured "
                           "without their values, and remove it from the tables document.")
                continue
            if table.checks is not None:
                cols = set(table.columns) if table.columns is not None else None
                found[tname] = declared_checks_of(ctx, file, tname, table.checks, cols, list(table.grain), table.line("checks"))
    return found


def _entity_owning(ctx: Context, table: str):
    """The entity whose relation `<silver>.<table>` is (the entity, its staged, reject, current or
    loads relation), or None."""
    from ..ir.lengths import RELATION_SUFFIXES

    schema, _, name = table.partition(".")
    if schema != ctx.loaded.settings.schemas.silver:
        return None
    suffixes = [""] + [suffix for suffix, _has in RELATION_SUFFIXES]
    return next((e for e in sorted(set(ctx.entities) | set(ctx.loaded.known_entities))
                 for suffix in suffixes if name == e + suffix), None)


def check_sql_files(ctx: Context) -> list:
    """Parse every SQL check file; refuse the malformed ones; return the parsed checks."""
    if not ctx.loaded.check_files:
        return []
    from ..checks.sqlfile import check_table_limits, parse_check_file, refuse_keep

    settings = ctx.loaded.settings
    default = settings.checks.on_failure
    source = "assay.yml" if (ctx.loaded.root / "assay.yml").exists() else "default"
    parsed = []
    for rel_path, text in ctx.loaded.check_files:
        inner = rel_path
        prefix = ctx.loaded.checks_dir.rstrip("/") + "/"
        if inner.startswith(prefix):
            inner = inner[len(prefix):]
        check, problems = parse_check_file(inner, text, default_on_failure=default, default_source=source)
        for p in problems:
            ctx.report(rel_path, p.line, p.message, p.code)
        if check is None:
            continue
        stray = _stray_header_line(text) if check.header_line_count == 0 else 0
        if check.header_line_count == 0 and _near_header(text):
            # `/* ASSAY` or `/* assay:` on line 1: meant as the header, read as a comment, so its
            # settings silently gave way to the default (an outside tester, session 41)
            ctx.out.append(Diagnostic(
                rel_path, 1,
                f"check `{check.name}` opens line 1 with {_shown_line(text)}, which is not a header: a header's "
                f"first line is `/* assay` alone, in lower case. This block is ordinary SQL and the check takes "
                f"`on_failure: {check.on_failure}`; write `/* assay` on line 1 for its settings to apply.",
                "SQL_CHECK_INVALID", severity="warning"))
        elif stray:
            # 002: only a block opening the first line is a header; this one is ordinary SQL, so a
            # `warn` or `keep` written in it would silently be the default instead
            ctx.out.append(Diagnostic(
                rel_path, stray,
                f"check `{check.name}` opens a header block on line {stray}, but a header opens the file's first "
                f"line; this block is ordinary SQL and the check takes `on_failure: {check.on_failure}`. Move the "
                "block to line 1 (comments go after it) for its settings to apply.",
                "SQL_CHECK_INVALID", severity="warning"))
        known_entity = check.namespace == settings.schemas.silver and check.table in ctx.entities
        known_table = ctx.declares_table(f"{check.namespace}.{check.table}")
        # A table named in a spec document that does not parse may be declared there: that
        # document's own problem is reported, and this would be its echo (decision 0028).
        unparsed = ctx.loaded.may_declare(check.table) or ctx.loaded.may_declare(f"{check.namespace}.{check.table}")
        # An entity left out for its own grammar problem (`fields: null`) is still declared.
        unparsed = unparsed or (check.namespace == settings.schemas.silver and check.table in ctx.loaded.known_entities)
        if not known_entity and not known_table and not unparsed:
            ctx.report(
                rel_path,
                1,
                f"check `{check.name}` is on `{check.namespace}.{check.table}`, which is neither an entity assay builds (schema `{settings.schemas.silver}`) nor a table declared in a `tables_version: 1` document; move the file under checks/<schema>/<table>/ of a known table.",
                "SQL_CHECK_INVALID",
            )
        if known_entity:
            ent = ctx.entities[check.table][1]
            materialization = "incremental" if ent.materialized == "incremental" else "table"
            problem = refuse_keep(check, materialization)
            if problem is not None:
                ctx.report(rel_path, problem.line, problem.message, problem.code)
        parsed.append((rel_path, check))
    for p in check_table_limits([c for _r, c in parsed]):
        ctx.report(ctx.loaded.checks_dir, p.line, p.message, p.code)
    _refuse_waiting_on_each_other(ctx, parsed)
    return parsed


def _refuse_waiting_on_each_other(ctx: Context, parsed: list) -> None:
    """Refuse, at each file, a SQL check file of an entity that joins another entity which (through
    its own check files or the parents its referential rules probe, directly or by a chain) waits
    for the first: a check reads the entities it joins as built in the same run, so each entity
    would wait for the other (decision 0974)."""
    from ..lower.check_reads import entities_read

    silver = ctx.loaded.settings.schemas.silver
    reads: dict[str, list] = {}  # entity -> [(rel_path, check, other entity)]
    for rel_path, check in parsed:
        if check.namespace == silver and check.table in ctx.entities:
            for other in entities_read(check.sql, check.namespace, check.table, silver, ctx.entities):
                reads.setdefault(check.table, []).append((rel_path, check, other))
    if not reads:
        return
    # An entity also waits for the parent its referential rules probe (its staged model reads it).
    waits: dict[str, set] = {e: {o for _p, _c, o in edges} for e, edges in reads.items()}
    for name, (_file, ent) in ctx.entities.items():
        for rule in ent.quality:
            found = ctx.relationships.get(getattr(rule, "via", None) or "")
            if getattr(rule, "rule", None) == "referential" and found is not None:
                waits.setdefault(name, set()).add(found[1].to)

    def waits_for(start: str, target: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            e = todo.pop()
            if e == target:
                return True
            if e not in seen:
                seen.add(e)
                todo.extend(waits.get(e, ()))
        return False

    for entity, edges in sorted(reads.items()):
        for rel_path, check, other in edges:
            if waits_for(other, entity):
                ctx.report(rel_path, check.sql_line,
                           f"check `{check.name}` joins entity `{other}`, which itself waits for `{entity}` (its "
                           "SQL check files join it, or its referential rules probe it, directly or through other "
                           "entities); a check reads the entities it joins "
                           "as built in the same run, so each would wait for the other. Keep the join in one of "
                           "these checks only.",
                           "SQL_CHECK_INVALID")


_NEAR_HEADER = re.compile(r"/\*[ \t]*assay\b.*", re.IGNORECASE)


def _near_header(text: str) -> bool:
    """Whether the first line looks like a header's opening without being one (`/* ASSAY`,
    `/* assay:`, `/* assay on_failure: warn */`)."""
    from ..checks.sqlfile import opens_header

    first = _first_line(text)
    return bool(_NEAR_HEADER.fullmatch(first)) and not opens_header(first)


def _first_line(text: str) -> str:
    return text.replace("\r\n", "\n").split("\n", 1)[0].strip()


def _shown_line(text: str) -> str:
    """The file's first line as a message quotes it."""
    first = _first_line(text)
    return f"`{first[:40]}`" + ("..." if len(first) > 40 else "")


def _stray_header_line(text: str) -> int:
    """The line of a header block's opening after the first line (`/* assay` alone on it), or 0."""
    from ..checks.sqlfile import opens_header

    for n, line in enumerate(text.replace("\r\n", "\n").split("\n")[1:], 2):
        if opens_header(line.strip()):
            return n
    return 0
