"""Refusals about rate thresholds: an entity's `thresholds:` and a rule's `max_rate` (decision 0980).

What is valid is decided by assay.checks.rates; this module walks the spec, reports every problem
at its file and line, and keeps each valid limit for resolution (Context.keep, "rate"), which
names a rule's limit after the rule's generated name and lowers it into a declared check.
"""

from __future__ import annotations

from ..checks.rates import RULE_KEYS, validate_entity_thresholds, validate_rule_limits
from ..spec.yamlload import locate
from .context import Context

#: What a referential rule does to an orphan row, by its on_missing (resolution reads it too).
REFERENTIAL_DISPOSITION = {"unknown_member": "flag", "quarantine": "quarantine", "flag": "flag"}


def _rule_limit(ctx: Context, file: str, rule, label: str, disposition) -> None:
    values = {k: getattr(rule, k) for k in RULE_KEYS}
    if all(v is None for v in values.values()):
        return
    def line_of(path: tuple) -> int:
        raw = getattr(rule, path[0]) if path else None
        if len(path) == 2 and isinstance(raw, dict):
            found = locate(raw, path[1:], 0, tolerant=False)[2]
            if found:
                return found
        return (rule.line(path[0]) if path else 0) or rule.line()

    limits, problems = validate_rule_limits(values, label=label, disposition=disposition, line_of=line_of)
    for p in problems:
        ctx.report(file, p.line, p.message, p.code)
    if limits:
        ctx.keep(rule, "rate", tuple(limits))


def check_thresholds(ctx: Context) -> None:
    """Validate every entity's `thresholds:` and every rule's own limit."""
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.thresholds is not None:
            raw = ent.thresholds
            default = ent.line("thresholds") or ent.line()
            limits, problems = validate_entity_thresholds(
                raw, owner=f"entity {name}",
                line_of=lambda path, raw=raw, default=default: locate(raw, path, default, tolerant=False)[2] or default)
            for p in problems:
                ctx.report(file, p.line, p.message, p.code)
            ctx.keep(ent, "thresholds", tuple(limits))
        for rule in ent.quality:
            if rule.rule == "expression":
                _rule_limit(ctx, file, rule, f"expression rule {rule.name} of entity {name}", rule.on_fail)
            else:
                disposition = REFERENTIAL_DISPOSITION.get(rule.on_missing)
                _rule_limit(ctx, file, rule, f"the referential rule via {rule.via} of entity {name}", disposition)
        for mfile, m in ctx.mappings_of(name):
            for col, fm in list(m.key.items()) + list(m.fields.items()):
                for rule in fm.quality:
                    _rule_limit(ctx, mfile, rule, f"the {rule.rule} rule on {col} in mapping {m.name or m.source}",
                                rule.on_fail)
