"""Resolve: turn validated grammar models into the frozen IR.

Resolution settles everything the targets must not decide again: the
implicit `coercible` rules, the implicit `not_null` rules of a type-2 key
(decision 0416), generated rule names, effective dispositions,
the dedupe total order, relationships as columns, and checks normalised.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from typing import Optional

from ..duration import duration
from ..errors import Diagnostic
from .check_ids import declared_taken_ids, entity_taken_ids, sql_check_id_clashes
from ..spec.loader import LoadedSpec
from ..validate import Validated
from ..validate.context import joins_quality
from ..validate.thresholds import REFERENTIAL_DISPOSITION  # one table for validation and resolution
from ..validate.types import normalize_type
from .model import (
    DEDUPE_TAIL,
    INGESTION_COLUMNS,
    Column,
    Coverage,
    DedupeKey,
    Entity,
    FieldSource,
    Loc,
    Mapping,
    Project,
    Reconcile,
    ReconcileSide,
    Relationship,
    Rule,
    TableDecl,
)
from .naming import NameAllocator, base_name
from .lengths import too_long


def fingerprint(loaded: LoadedSpec) -> str:
    """A digest of every input file's path and bytes; identical specs give identical digests."""
    h = hashlib.sha256()
    paths = sorted(set(loaded.files) | {p for p, _t in loaded.check_files})
    root = loaded.root
    for rel in paths:
        h.update(rel.encode())
        h.update(b"\0")
        h.update((root / rel).read_bytes())
        h.update(b"\0")
    settings = root / "assay.yml"
    if settings.exists():
        h.update(b"assay.yml\0" + settings.read_bytes())
    return h.hexdigest()[:16]


def _mapping_of(file: str, doc, entity_model, validated: Validated) -> Mapping:
    fields = []
    for is_key, section in ((True, doc.key), (False, doc.fields)):
        for col, fm in section.items():
            path, steps = validated.field_source(fm)
            ftype = normalize_type(entity_model.fields[col].type) if col in entity_model.fields else "string"
            fields.append(
                FieldSource(
                    column=col,
                    path=path or (col,),
                    steps=steps,
                    target_type=ftype or "string",
                    is_key=is_key,
                    loc=Loc(file, fm.line() or doc.line()),
                )
            )
    unmapped = validated.parsed_value(doc, "unmapped")
    fresh = doc.freshness
    return Mapping(
        name=doc.name or doc.source,
        source=doc.source,
        file=file,
        fields=tuple(fields),
        unmapped=unmapped,
        freshness_warn=duration(fresh.warn_after) if fresh else None,
        freshness_error=duration(fresh.error_after) if fresh else None,
        loc=Loc(file, doc.line()),
    )


def _field_rule_params(rule, source: FieldSource, validated: Validated) -> dict:
    kind = rule.rule
    if kind == "range":
        return dict(validated.parsed_value(rule, "bounds"))
    if kind == "length":
        return {k: getattr(rule, k) for k in ("min", "max") if getattr(rule, k) is not None}
    if kind == "pattern":
        return {"regex": rule.regex}
    if kind == "in_set":
        return {"values": tuple(sorted({str(v) if not isinstance(v, bool) else str(v).lower() for v in rule.values}))}
    if kind == "in_enum":
        return {"values": source.enum_values}
    if kind == "normalize":
        return {"form": rule.form}
    if kind == "charset":
        mode, ranges = validated.parsed_value(rule, "charset")
        return {"mode": mode, "ranges": ranges}
    return {}


def _frozen(params: dict) -> tuple:
    return tuple(sorted(params.items()))


def _resolve_entity(name: str, file: str, ent, mapping_docs, relationships: dict, parents_scd: dict, validated: Validated, out: list[Diagnostic], silver: str = "silver") -> Entity:
    columns = tuple(
        Column(
            name=col,
            type=normalize_type(f.type) or "string",
            required=f.required,
            classification=f.classification,
            description=f.description,
            asserts=tuple(sorted((k, v if not isinstance(v, list) else tuple(v)) for k, v in (f.assert_.model_dump(exclude_none=True).items() if f.assert_ else []))),
        )
        for col, f in ent.fields.items()
    )
    mappings = tuple(sorted((_mapping_of(f, d, ent, validated) for f, d in mapping_docs), key=lambda m: m.name))
    docs_by_mapping = {(d.name or d.source): (f, d) for f, d in mapping_docs}
    opted_in = joins_quality(ent, mapping_docs)
    dedupe: tuple[DedupeKey, ...] = ()
    order_cols: set[str] = set()
    if ent.dedupe is not None:
        keys = [ent.dedupe.field] + list(ent.dedupe.tie_break or [])
        # The order is total: the source row, then its delivery, then its mapping settle every
        # remaining tie (decision 0014: only one delivery per source row competes, but two mappings
        # may share a `_source_row_id` and a `_load_id`: decision 1135).
        for meta in DEDUPE_TAIL:
            if meta not in keys:
                keys.append(meta)
        seen = []
        for k in keys:
            if k not in seen:
                seen.append(k)
        dedupe = tuple(DedupeKey(k, k in DEDUPE_TAIL or k in INGESTION_COLUMNS) for k in seen)
        order_cols = {k for k in seen if k not in INGESTION_COLUMNS and k not in DEDUPE_TAIL}

    authored = {r.name: r for r in ent.quality if r.rule == "expression"}
    names = NameAllocator(authored)
    rules: list[Rule] = []
    limits: list = list(validated.parsed.get((id(ent), "thresholds"), ()))

    def limit_of(node, rule_name: str, where: str) -> None:
        # A rule's own rate limit, named after the rule's generated name (decision 0980).
        for found in validated.parsed.get((id(node), "rate"), ()):
            limits.append(replace(found, rule=rule_name, file=where))

    def add(kind, disposition, column, mapping, params, implicit, loc, relationship=None):
        rname, clash = names.take(base_name(kind, column, params, relationship))
        if clash:
            expr = authored[rname]
            what = f"implicit `{kind}` rule" if implicit else f"`{kind}` rule"
            on = f"on `{column}` in mapping `{mapping}` ({loc})" if column else f"via `{relationship}` ({loc})"
            out.append(
                Diagnostic(
                    file,
                    expr.line("name") or expr.line(),
                    f"expression rule `{rname}` of entity `{name}` has the name assay generates for the {what} {on}; "
                    f"generated names are part of the interface (flags, reject rows, the mart), so rename the expression rule, e.g. `{rname}_check`.",
                    "SPEC_INVALID",
                )
            )
        rules.append(Rule(rname, kind, disposition, column, mapping, _frozen(params), implicit, loc))
        return rname

    # Declaration order: mappings by name (never by the file they are written in: a file renamed or
    # moved would rename the rules and read as RESTATING, decision 0959), then key fields and
    # fields in document order.
    for m in sorted(mappings, key=lambda m: m.name):
        _f, doc = docs_by_mapping[m.name]
        for src in m.fields:
            fm = (doc.key if src.is_key else doc.fields)[src.column]
            explicit = [r for r in fm.quality if r.rule == "coercible"]
            if opted_in and not explicit:  # every chain: its markers see only failed casts (decision 0019)
                disp = "fail" if src.column in order_cols else "quarantine"
                add("coercible", disp, src.column, m.name, {}, True, src.loc)
            if ent.scd == "type2" and src.is_key and not any(r.rule == "not_null" for r in fm.quality):
                # A kept row without a full key cannot be versioned (decision 0416): it is diverted
                # with the entity's quarantine, or stops the build where there is none.
                add("not_null", "quarantine" if ent.quarantine is not None and ent.quarantine.retention else "fail",
                    src.column, m.name, {}, True, src.loc)
            for r in fm.quality:
                loc = Loc(m.file, r.line() or src.loc.line)
                limit_of(r, add(r.rule, r.on_fail, src.column, m.name, _field_rule_params(r, src, validated), False, loc), m.file)
    for r in ent.quality:
        loc = Loc(file, r.line() or ent.line("quality"))
        if r.rule == "expression":
            rules.append(Rule(r.name, "expression", r.on_fail, None, None, _frozen({"expr": r.expr}), False, loc))
            limit_of(r, r.name, file)
        else:
            rel = relationships[r.via]
            params = {
                "relationship": rel.name,
                "parent": rel.to_entity,
                "columns": rel.columns,
                "on_missing": r.on_missing,
                "parent_scd": parents_scd.get(rel.to_entity, "type1"),
            }
            limit_of(r, add("referential", REFERENTIAL_DISPOSITION[r.on_missing], None, None, params, False, loc, relationship=rel.name), file)

    own_sql = [(p, c) for p, c in validated.sql_checks if c.table == name and c.namespace == silver]
    sqls = tuple(c for _p, c in own_sql)
    declared = _with_rate_checks(name, file, tuple(validated.declared.get(name, ())), limits, out)
    out.extend(sql_check_id_clashes(name, own_sql, entity_taken_ids(declared, rules)))
    return Entity(
        name=name,
        grain=ent.grain,
        key=tuple(ent.key),
        scd=ent.scd,
        owner=ent.owner,
        description=ent.description,
        grants_select=tuple(sorted(ent.grants.select)) if ent.grants else (),
        columns=columns,
        mappings=mappings,
        rules=tuple(sorted(rules, key=lambda r: r.name)),
        dedupe=dedupe,
        opted_in=opted_in,
        retention=duration(ent.quarantine.retention) if ent.quarantine else None,
        redact=validated.parsed_value(ent.quarantine, "redact") if ent.quarantine else (),
        materialized=ent.materialized,
        incremental_lag=duration(ent.incremental.lag) if ent.incremental else None,
        declared_checks=declared,
        sql_checks=sqls,
        file=file,
        loc=Loc(file, ent.line()),
    )


def _with_rate_checks(name: str, file: str, declared: tuple, limits: list, out: list[Diagnostic]) -> tuple:
    """The entity's declared checks followed by the checks its rate limits lower into; a derived
    id another check already claims is refused at the limit (its file is the rule's own)."""
    from ..checks.rates import lower_rate_limits

    checks, clashes = lower_rate_limits(limits, declared, owner=f"entity {name}")
    for limit, message in clashes:
        out.append(Diagnostic(limit.file or file, limit.line or 1, message, "DECLARED_CHECK_DUPLICATE"))
    return declared + tuple(checks)


def resolve(loaded: LoadedSpec, validated: Validated) -> tuple[Optional[Project], list[Diagnostic]]:
    """The IR of a validated project, or None with the diagnostics that stop it."""
    if not validated.ok:
        return None, validated.diagnostics + _problems_of_the_clean_part(loaded, validated)
    return _resolved(loaded, validated, None)


def _problems_of_the_clean_part(loaded: LoadedSpec, validated: Validated) -> list[Diagnostic]:
    """What resolution finds (an expression rule named like a generated rule, a generated name over
    63 characters) in the entities validation found nothing wrong with, nor with their mappings,
    so that a spec gets every problem at once: these came only after every other problem was fixed
    (an outside tester, session 45). An entity is judged with the relationships among such
    entities only; coverage, reconcile and tables documents are left to the full pass."""
    errors = [d for d in validated.diagnostics if d.severity == "error"]
    bad = {d.file for d in errors}
    targets: dict[str, set] = {}
    for file, doc, _raw in loaded.mapping_docs:
        targets.setdefault(doc.target, set()).add(file)
    clean = set()
    for file, doc, _raw in loaded.entity_docs:
        # a problem in a file of several entities is the entity it stands under (by line); above
        # the first, every entity of the file
        starts = sorted((ent.line() or 0, name) for name, ent in doc.entities.items())
        hit = set()
        for d in (d for d in errors if d.file == file):
            under = [name for line, name in starts if line <= (d.line or 0)]
            hit |= {under[-1]} if under else {name for _l, name in starts}
        clean |= {name for _l, name in starts if name not in hit and not (targets.get(name, set()) & bad)}
    ends = [(rel.from_, rel.to) for _f, doc, _raw in loaded.entity_docs for rel in doc.relationships]
    while True:  # a child of a parent left out is left out too (its referential rules read the relationship)
        left = {child for child, parent in ends if parent not in clean} & clean
        if not left:
            break
        clean -= left
    if not clean:
        return []
    try:
        _project, found = _resolved(loaded, validated, frozenset(clean))
    except Exception:  # noqa: BLE001 - a pass over a spec with problems; the full pass after the fix says the rest
        return []
    return [d for d in found if d not in validated.diagnostics]


def _resolved(loaded: LoadedSpec, validated: Validated, only: Optional[frozenset]) -> tuple[Optional[Project], list[Diagnostic]]:
    """`resolve` of a validated spec, or (`only`) of those of its entities alone."""
    out: list[Diagnostic] = []
    entities_raw = {}
    relationships: dict[str, Relationship] = {}
    coverage: list[Coverage] = []
    reconcile: list[Reconcile] = []
    for file, doc, _raw in loaded.entity_docs:
        for name, ent in doc.entities.items():
            if only is None or name in only:
                entities_raw[name] = (file, ent)
        for rel in doc.relationships:
            if only is None or (rel.from_ in only and rel.to in only):
                relationships[rel.name] = Relationship(rel.name, rel.from_, rel.to, tuple(sorted(rel.via.items())), rel.cardinality, Loc(file, rel.line()))
    parents_scd = {n: e.scd for n, (_f, e) in entities_raw.items()}
    for file, doc, _raw in loaded.entity_docs if only is None else ():
        for cov in doc.coverage:
            rel = relationships[cov.relationship]
            coverage.append(Coverage(cov.name, rel.name, rel.to_entity, rel.from_entity, rel.columns, cov.min, cov.on_fail, Loc(file, cov.line())))
        for rec in doc.reconcile:
            sides = []
            for key in ("left", "right"):
                agg, ent_name, col, by = validated.parsed_value(rec, key)
                sides.append(ReconcileSide(ent_name, col, agg, by or tuple(entities_raw[ent_name][1].key)))
            reconcile.append(Reconcile(rec.name, sides[0], sides[1], str(rec.tolerance), rec.on_fail, Loc(file, rec.line())))
    mapping_docs_by_target: dict[str, list] = {}
    for file, doc, _raw in loaded.mapping_docs:
        mapping_docs_by_target.setdefault(doc.target, []).append((file, doc))
    entities = []
    for name in sorted(entities_raw):
        file, ent = entities_raw[name]
        entities.append(
            _resolve_entity(
                name, file, ent, mapping_docs_by_target.get(name, []), relationships, parents_scd,
                validated, out, loaded.settings.schemas.silver,
            )
        )
    tables = []
    for file, doc, _raw in loaded.table_docs if only is None else ():
        for tname, t in doc.tables.items():
            tables.append(TableDecl(tname, tuple(t.grain), tuple(t.columns) if t.columns is not None else None, tuple(validated.declared.get(tname, ())), Loc(file, t.line())))
            out.extend(sql_check_id_clashes(tname, [(p, c) for p, c in validated.sql_checks if f"{c.namespace}.{c.table}" == tname],
                                            declared_taken_ids(validated.declared.get(tname, ()))))
    s = loaded.settings.schemas
    entity_names = {e.name for e in entities}
    project = Project(
        name=loaded.settings.name,
        schemas=(("bronze", s.bronze), ("gold", s.gold), ("meta", s.meta), ("silver", s.silver)),
        entities=tuple(entities),
        relationships=tuple(sorted(relationships.values(), key=lambda r: r.name)),
        coverage=tuple(sorted(coverage, key=lambda c: c.name)),
        reconcile=tuple(sorted(reconcile, key=lambda r: r.name)),
        tables=tuple(sorted(tables, key=lambda t: t.name)),
        sql_checks=tuple(c for _p, c in validated.sql_checks if not (c.namespace == s.silver and c.table in entity_names)),
        spec_files=tuple(sorted(loaded.files)),
        fingerprint=fingerprint(loaded),
        skipped=tuple(sorted(loaded.skipped)),
        check_budget=(loaded.settings.checks.scan_budget_bytes, loaded.settings.checks.time_budget_seconds),
        check_budgets=_check_budgets(loaded),
        snapshot_clock=loaded.settings.dbt.snapshot_clock,
    )
    out.extend(too_long(project))
    if out:
        return None, sorted(out)
    return project, []


def _check_budgets(loaded: LoadedSpec) -> tuple[tuple[str, int, int], ...]:
    """`checks.budgets` of assay.yml: each table's own budget, its unstated half the project's
    (validation refused a budget naming no entity or table: `validate/checks.check_budget_names`)."""
    checks = loaded.settings.checks
    return tuple((name, b.scan_budget_bytes or checks.scan_budget_bytes, b.time_budget_seconds or checks.time_budget_seconds)
                 for name, b in sorted(checks.budgets.items()))


def compile_spec(root, target: Optional[str] = None, dialect: Optional[str] = None) -> tuple[Optional[Project], list[Diagnostic], LoadedSpec]:
    """Load, validate and resolve a spec directory: the one entry point targets and the CLI use.

    `target` adds the refusals of what that target cannot realise (validate/targets.py), and
    `dialect` (SQLMesh's `--dialect`) those of that dialect.
    """
    from ..spec.loader import load_spec
    from ..validate import validate

    loaded = load_spec(root)
    validated = validate(loaded, target, dialect)
    project, diags = resolve(loaded, validated)
    return project, diags, loaded


_ = re  # keep the import for future name folding of authored expressions
