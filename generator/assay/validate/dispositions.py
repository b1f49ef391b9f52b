"""The one sentence for every disposition mistake, shared by every rule kind."""

from __future__ import annotations

from typing import Optional

DISPOSITIONS = ("flag", "quarantine", "fail")


def disposition_problem(value: Optional[str], what: str, allowed: tuple[str, ...] = DISPOSITIONS) -> Optional[str]:
    """None when `value` is a valid on_fail, else the refusal sentence."""
    choices = ", ".join(f"`{a}`" for a in allowed)
    if value is None:
        return f"{what} states no `on_fail`; write `on_fail:` with one of {choices}. There is no default: it is the one setting nobody reads before shipping."
    if value == "drop":
        return (
            f"{what} says `on_fail: drop`, and assay never drops a row silently. Write `on_fail: quarantine` "
            "(the row goes to the reject table and can be replayed; add `quarantine: {retention: 90d}` to the entity "
            "if it has none) or `on_fail: flag` to keep it with a flag."
        )
    if value not in allowed:
        return f"{what} says `on_fail: {value}`; write one of {choices}."
    return None


RETENTION_FIX = "add `quarantine: {retention: 90d}` to the entity (hours, days or weeks: `6h`, `90d`, `2w`)"


def check_retention(ctx) -> None:
    """Refuse any way of quarantining a row on an entity with no `quarantine.retention`.

    The reject table holds raw source payloads, so how long they stay is stated, never
    defaulted. Explicit quarantines are reported where they are written; an entity
    whose only quarantines are the implicit `coercible` rules is reported once, on
    the entity, naming the columns.
    """
    for name, (file, ent) in sorted(ctx.entities.items()):
        if ent.quarantine is not None and ent.quarantine.retention:
            continue
        sites = []
        for rule in ent.quality:
            if rule.rule == "expression" and rule.on_fail == "quarantine":
                sites.append((file, rule.line("on_fail") or rule.line(), f"expression rule `{rule.name}`", "`on_fail: flag`"))
            elif rule.rule == "referential" and rule.on_missing == "quarantine":
                sites.append((file, rule.line("on_missing") or rule.line(), f"referential rule via `{rule.via}`", "`on_missing: flag` or `unknown_member`"))
        mappings = ctx.mappings_of(name)
        for mfile, m in mappings:
            for col, fm in list(m.key.items()) + list(m.fields.items()):
                for rule in fm.quality:
                    if rule.on_fail == "quarantine":
                        sites.append((mfile, rule.line("on_fail") or rule.line(), f"rule `{rule.rule}` on `{col}`", "`on_fail: flag`"))
        for sfile, line, what, weaker in sites:
            ctx.report(sfile, line, f"{what} of `{name}` quarantines rows, and `{name}` has no `quarantine.retention`; the reject table keeps raw source payloads, so say how long: {RETENTION_FIX}, or use {weaker}.")
        if sites:
            continue
        reasons = [why for why, present in (
            ("`quarantine:`", ent.quarantine is not None),
            ("`quality:`", bool(ent.quality)),
            ("field rules", any(fm.quality for _f, m in mappings for fm in list(m.key.values()) + list(m.fields.values()))),
        ) if present]
        if not reasons:
            continue
        order = set()
        if ent.dedupe is not None:
            order = {ent.dedupe.field, *(ent.dedupe.tie_break or [])}
        implicit = []
        for _f, m in mappings:
            for col, fm in list(m.key.items()) + list(m.fields.items()):
                if col in order or col not in ent.fields or any(r.rule == "coercible" for r in fm.quality):
                    continue
                if col not in implicit:
                    implicit.append(col)
        if implicit:
            line = ent.quarantine.line() if ent.quarantine is not None else ent.line()
            cols = ", ".join(f"`{c}`" for c in implicit)
            ctx.report(
                file,
                line or ent.line(),
                f"entity `{name}` joins the quality system (it declares {' and '.join(reasons)}), so a value of {cols} that does not cast is quarantined by the implicit `coercible` rule, and `{name}` has no `quarantine.retention`; {RETENTION_FIX}, or state `{{rule: coercible, on_fail: flag}}` on those fields.",
            )


def check_type2_keys(ctx) -> None:
    """Refuse a rule that would keep a row of a type-2 entity without its full key (decision 0416).

    A merge on the key never matches a NULL, so such a row can never be versioned: the implicit
    `not_null` rule of each key column diverts it. A `not_null` stated on a key column replaces
    the implicit one and so must divert too; a `coercible` stated there must too, since a key
    value that does not cast is a NULL that `not_null` leaves to `coercible`.
    """
    for name, (_file, ent) in sorted(ctx.entities.items()):
        if ent.scd != "type2":
            continue
        for mfile, m in ctx.mappings_of(name):
            for col, fm in m.key.items():
                for rule in fm.quality:
                    if rule.rule in ("not_null", "coercible") and rule.on_fail == "flag":
                        ctx.report(
                            mfile, rule.line("on_fail") or rule.line(),
                            f"rule `{rule.rule}` on key column `{col}` of `{name}` says `on_fail: flag`, and `{name}` is "
                            f"`scd: type2`: a flagged row is kept, and a kept row whose key is NULL can never be versioned "
                            f"in the history readers read. Write `on_fail: quarantine` (the row goes to `{name}__reject` "
                            f"and can be replayed after a fix) or `on_fail: fail`, or leave the rule out: assay then "
                            f"applies its implicit `not_null` on the key (docs/decisions/0416).",
                        )
