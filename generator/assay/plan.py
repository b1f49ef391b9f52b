"""`assay plan OLD NEW`: what a spec change means for data already built.

Reference 001: adding, removing or changing a rule, changing a disposition in
either direction, and changing dedupe are RESTATING: rows sitting in the reject
table (not in bronze's incremental window) may now pass, so a backfill alone
would leave them quarantined. A plan therefore carries a `replay_scope` beside
its `backfill_scope`:

- an entity with a restating change is in replay_scope, and so is one with a reject table whose
  values change (a mapping's sources, paths or transforms, a field's type: BREAKING, decision
  0999), since the rows its reject table holds were judged on the old values; so is every entity whose
  referential rule at `on_missing: quarantine` reaches one, directly or through
  a chain. The scope is ordered parents first, ties by name; a cycle is broken at
  its first member by name and parent-first order resumes from there.
- an entity whose referential rule at `unknown_member` or `flag` reaches an entity
  in replay_scope is in backfill_scope (its rows still in bronze are rebuilt
  against the returned parent), as is every entity whose values change
  (mappings, fields, keys).

Table checks (declared checks, SQL check files, coverage and reconcile tests, and the checks of
tables assay only reads) move no row: they decide whether the next build publishes. Every
difference of them is CHECKS (decision 1128): added, removed, its parameters tightened, relaxed
or changed, its enforcement or on_failure changed, each with what it means for the next build.
They put nothing in either scope; `--data` runs the next build and says whether it publishes.

Pure: two IRs in, a Plan out.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ir.model import Entity, Mapping, Project
from .ir.referential import reach, referential_edges
from .plan_checks import CHECKS, check_changes, project_check_changes  # noqa: F401 (CHECKS: one of the classes)

RESTATING = "RESTATING"
# BREAKING changes of the values an entity's rules judge: its reject table's rows may pass now
REVALUING = ("mappings_changed", "fields_changed")
BREAKING = "BREAKING"
NON_BREAKING = "NON_BREAKING"
# CHECKS: a table check added, removed or changed (plan_checks.py, decision 1128)


@dataclass(frozen=True)
class Change:
    entity: str
    kind: str
    detail: str
    classification: str

    def as_dict(self) -> dict:
        return {"entity": self.entity, "kind": self.kind, "detail": self.detail, "classification": self.classification}


@dataclass(frozen=True)
class Plan:
    changes: tuple[Change, ...]
    replay_scope: tuple[str, ...]
    backfill_scope: tuple[str, ...]

    def as_dict(self) -> dict:
        return {
            "changes": [c.as_dict() for c in self.changes],
            "replay_scope": list(self.replay_scope),
            "backfill_scope": list(self.backfill_scope),
        }


def _rule_sig(rule) -> tuple:
    params = rule.params
    if rule.kind == "expression":
        # The expression as the generator spells it: spacing and line breaks are no change.
        params = tuple((k, _spelled(v) if k == "expr" else v) for k, v in params)
    if rule.kind == "referential":
        params = tuple((k, v) for k, v in params if k != "on_missing")  # its disposition (`_said`)
    return (rule.kind, rule.column, rule.mapping, params)


def _spelled(expr_text: str) -> str:
    """An authored expression as sqlglot reads it (the generator's reading, lower/spelling.py)."""
    import sqlglot  # only a plan with an expression rule pays for the import

    return sqlglot.parse_one(expr_text, read="duckdb").sql(dialect="duckdb")


def _mapping_sig(m: Mapping) -> tuple:
    """What a mapping does to the entity's values: its source and each field's path and transforms,
    by column. Not where it is written (file, line, field order: a comment or a moved field changes
    no value) nor its freshness or unmapped list (decision 0955), nor the field's type, which is the
    entity's (`fields_changed` says it; an outside tester, session 41, read `mappings_changed` for
    mapping files that had not changed)."""
    return (m.name, m.source, tuple(sorted((f.column, f.path, f.steps, f.is_key) for f in m.fields)))


def fields_detail(old: Entity, new: Entity) -> str:
    """What `fields_changed` names: each field added, removed, re-typed or made required or optional,
    by name (an outside tester, session 49, read only "columns or their types"), and, on a type-2
    entity, that a field added opens a new version of every current key at the next build
    (docs/sqlmesh.md, Type 2: its history compares every column)."""
    before = {c.name: c for c in old.columns}
    after = {c.name: c for c in new.columns}
    said = [f"added {c.name} ({c.type})" for c in new.columns if c.name not in before]
    said += [f"removed {c.name}" for c in old.columns if c.name not in after]
    for c in new.columns:
        was = before.get(c.name)
        if was is not None and was.type != c.type:
            said.append(f"{c.name}: {was.type} -> {c.type}")
        if was is not None and was.required != c.required:
            said.append(f"{c.name}: {'required -> optional' if was.required else 'optional -> required'}")
    if not said:
        said = ["the order of the columns"]
    if new.scd == "type2" and old.scd == "type2" and any(c.name not in before for c in new.columns):
        said.append("the next build opens a new version of every current key (a column the history has not stored "
                    "is a change of every row)")
    return "; ".join(said)


def _declaration_sig(m: Mapping) -> tuple:
    """What a mapping declares about its source without changing a value: freshness, unmapped columns."""
    return (m.freshness_warn, m.freshness_error, tuple(sorted(m.unmapped)))


def _column_meta(entity: Entity) -> dict:
    """{field: what it declares without changing a value or a route} (asserts are alerts, decision 0955)."""
    return {c.name: {"description": c.description or "", "classification": c.classification or "", "assert": c.asserts}
            for c in entity.columns}


def _metadata_changes(old: Entity, new: Entity) -> list[str]:
    """What changed of what an entity declares without changing a row: the entity's own grain,
    owner, description, grants, retention and redaction, and each field's description,
    classification and assert (`classification of email`). A field added or removed is its own
    change (BREAKING), not a change of another field's metadata."""
    changed = [what for what, a, b in (("grain", old.grain, new.grain), ("owner", old.owner, new.owner),
                                       ("description", old.description, new.description),
                                       ("grants", old.grants_select, new.grants_select),
                                       ("retention", old.retention, new.retention), ("redaction", old.redact, new.redact))
               if a != b]
    before, after = _column_meta(old), _column_meta(new)
    for field in sorted(set(before) & set(after)):
        changed += [f"{what} of {field}" for what in ("description", "classification", "assert")
                    if before[field][what] != after[field][what]]
    return changed


def _said(rule) -> str:
    """A rule's disposition as the spec says it: a referential rule's `on_missing` (its
    `unknown_member` flags too, but also rewrites the key: `flag` hid that change)."""
    return rule.param("on_missing") if rule.kind == "referential" else rule.disposition


def _entity_changes(old: Entity, new: Entity) -> list[Change]:
    out: list[Change] = []
    name = new.name
    old_rules = {r.name: r for r in old.rules}
    new_rules = {r.name: r for r in new.rules}
    for rname in sorted(set(new_rules) - set(old_rules)):
        out.append(Change(name, "rule_added", f"{rname} ({_said(new_rules[rname])})", RESTATING))
    for rname in sorted(set(old_rules) - set(new_rules)):
        out.append(Change(name, "rule_removed", f"{rname} ({_said(old_rules[rname])})", RESTATING))
    for rname in sorted(set(old_rules) & set(new_rules)):
        o, n = old_rules[rname], new_rules[rname]
        if _said(o) != _said(n):
            out.append(Change(name, "disposition_changed", f"{rname}: {_said(o)} -> {_said(n)}", RESTATING))
        if _rule_sig(o) != _rule_sig(n):
            out.append(Change(name, "rule_changed", rname, RESTATING))
    if old.dedupe != new.dedupe:
        out.append(Change(name, "dedupe_changed", ", ".join(k.column for k in new.dedupe) or "(none)", RESTATING))
    if old.key != new.key:
        out.append(Change(name, "key_changed", f"({', '.join(old.key)}) -> ({', '.join(new.key)})", BREAKING))
    if [(c.name, c.type, c.required) for c in old.columns] != [(c.name, c.type, c.required) for c in new.columns]:
        out.append(Change(name, "fields_changed", fields_detail(old, new), BREAKING))
    if [_mapping_sig(m) for m in old.mappings] != [_mapping_sig(m) for m in new.mappings]:
        out.append(Change(name, "mappings_changed", "sources, paths or transforms", BREAKING))
    old_maps = {m.name: m for m in old.mappings}
    if any(_declaration_sig(m) != _declaration_sig(old_maps[m.name]) for m in new.mappings if m.name in old_maps):
        out.append(Change(name, "source_declaration_changed", "freshness or unmapped columns", NON_BREAKING))
    if old.scd != new.scd:
        out.append(Change(name, "scd_changed", f"{old.scd} -> {new.scd}", BREAKING))
    if old.materialized != new.materialized:
        # table -> incremental: the stored staged table has no ledger; incremental -> table: the
        # rebuild from bronze drops rows whose bronze aged out (docs/incremental.md). Both rebuild.
        out.append(Change(name, "materialization_changed", f"{old.materialized} -> {new.materialized}", BREAKING))
    elif old.incremental_lag != new.incremental_lag:
        out.append(Change(name, "materialization_changed", f"lag {old.incremental_lag or '0'} -> {new.incremental_lag or '0'}", NON_BREAKING))
    meta = _metadata_changes(old, new)
    if meta:
        out.append(Change(name, "metadata_changed", ", ".join(meta), NON_BREAKING))
    out.extend(Change(*c) for c in check_changes(name, old.declared_checks, new.declared_checks, old.sql_checks, new.sql_checks))
    return out


def parents_first(names: set[str], edges: dict[str, set[str]]) -> tuple[str, ...]:
    """Topological order over `names` (parent before child), ties by name. Where every name left
    waits on another, a cycle is broken at its first member by name (reference 001), and parent
    first order resumes from there: the cycle is one that waits on no name outside it, never a
    child of a cycle (which would come before its parents)."""
    remaining = set(names)
    incoming = {n: {p for p, cs in edges.items() if n in cs and p in remaining and p != n} for n in remaining}
    order: list[str] = []
    while remaining:
        ready = sorted(n for n in remaining if not (incoming[n] & remaining))
        if ready:
            pick = ready[0]
        else:
            # the members of cycles that wait only on their own cycle: whoever they wait on, at
            # any distance, they also reach
            def closure(start: str, step) -> set[str]:
                seen, todo = set(), [start]
                while todo:
                    for m in step(todo.pop()):
                        if m in remaining and m not in seen:
                            seen.add(m)
                            todo.append(m)
                return seen

            pick = min(n for n in remaining
                       if closure(n, lambda m: incoming[m]) <= closure(n, lambda m: edges.get(m, ())))
        order.append(pick)
        remaining.discard(pick)
    return tuple(order)


# A change of assay.yml is told under this name: it is no entity's (decision 0997).
SETTINGS = "assay.yml"
# What moving a schema role means for what is already built: the next build writes there, and what
# the old schema holds stays where it is, read by nothing of assay's.
_SCHEMA_MOVES = {
    "bronze": ("every entity reads its bronze relations from the new schema", BREAKING),
    "silver": ("every entity, its staged and reject tables are built in the new schema; the old schema's "
               "tables, their reject history included, stay there and are no longer read", BREAKING),
    "gold": ("the quality history (mart_data_quality) starts in the new schema; the old one's runs stay there "
             "and assay report and assay anomalies no longer read them", NON_BREAKING),
    "meta": ("check results and events start in the new schema; the old one's stay there and assay checks, "
             "check list and table list no longer read them", NON_BREAKING),
}


def _settings_changes(old: Project, new: Project) -> list[Change]:
    """What assay.yml changed that decides where tables land or how they are built (a schema role,
    the check budgets, the dbt snapshot clock); a deploy reviewer was told "No changes" for a moved
    silver schema, a rebuild of every entity elsewhere."""
    out = []
    before, after = dict(old.schemas), dict(new.schemas)
    for role in sorted(after):
        if before.get(role) != after[role]:
            means, classification = _SCHEMA_MOVES[role]
            out.append(Change(SETTINGS, "schema_changed", f"{role}: {before.get(role)} -> {after[role]} ({means})", classification))
    if (old.check_budget, old.check_budgets) != (new.check_budget, new.check_budgets):
        out.append(Change(SETTINGS, "check_budget_changed", "checks over budget are recorded not_evaluated (decision 0530)",
                          NON_BREAKING))
    if old.snapshot_clock != new.snapshot_clock:
        out.append(Change(SETTINGS, "snapshot_clock_changed", f"{old.snapshot_clock} -> {new.snapshot_clock} (type-2 "
                          "versions from the next dbt build on; the stored ones keep their dates, decision 0996)", NON_BREAKING))
    return out


def moved_schemas(p: Plan) -> list[str]:
    """`role: old -> new` of each bronze or silver schema `p` moves (the BREAKING `schema_changed`s)."""
    return [c.detail.split(" (", 1)[0] for c in p.changes
            if c.entity == SETTINGS and c.kind == "schema_changed" and c.classification == BREAKING]


def plan(old: Project, new: Project) -> Plan:
    """Classify the changes between two resolved specs and name what to replay and backfill."""
    changes: list[Change] = []
    old_by = {e.name: e for e in old.entities}
    new_by = {e.name: e for e in new.entities}
    for name in sorted(set(new_by) - set(old_by)):
        changes.append(Change(name, "entity_added", new_by[name].grain, BREAKING))
    for name in sorted(set(old_by) - set(new_by)):
        changes.append(Change(name, "entity_removed", old_by[name].grain, BREAKING))
    for name in sorted(set(old_by) & set(new_by)):
        changes.extend(_entity_changes(old_by[name], new_by[name]))
    changes.extend(Change(*c) for c in project_check_changes(old, new))
    settings = _settings_changes(old, new)
    changes.extend(settings)
    restating = {c.entity for c in changes if c.classification == RESTATING and c.entity in new_by}
    # A rule judges the values the mapping makes: a widened enum_map, a trimmed or re-typed value
    # can make a row in the reject table pass as a relaxed rule would, and a backfill reads only
    # what bronze still holds (decision 0999).
    revalued = {c.entity for c in changes if c.kind in REVALUING and c.entity in new_by and new_by[c.entity].has_reject}
    quarantine_edges = referential_edges(new, ("quarantine",))
    replay = reach(restating | revalued, quarantine_edges)
    all_edges = referential_edges(new)
    soft_edges = referential_edges(new, ("unknown_member", "flag"))
    backfill = {c.entity for c in changes if c.classification == BREAKING and c.entity in new_by}
    if any(c.classification == BREAKING for c in settings):
        backfill |= set(new_by)  # bronze or silver moved: every entity is built anew
    backfill |= restating
    for parent in replay:
        backfill |= soft_edges.get(parent, set())
    return Plan(tuple(changes), parents_first(replay, all_edges), tuple(sorted(backfill)))


def history_columns(old: Project, new: Project) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(entity, columns whose type changed, columns no longer fields) of each type-2 entity of both
    specs: its history is kept, never rebuilt, so a changed or dropped column is a change to stored
    versions (decision 1139), which each target applies its own way."""
    old_by = {e.name: e for e in old.entities}
    out = []
    for e in new.entities:
        before = old_by.get(e.name)
        if e.scd != "type2" or before is None or before.scd != "type2":
            continue
        now = {c.name: c.type for c in e.columns}
        retyped = tuple(c.name for c in before.columns if c.name in now and now[c.name] != c.type)
        dropped = tuple(c.name for c in before.columns if c.name not in now)
        if retyped or dropped:
            out.append((e.name, retyped, dropped))
    return out
