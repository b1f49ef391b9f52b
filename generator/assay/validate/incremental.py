"""Refusals about `materialized: incremental` and its `incremental:` block.

An incremental entity settles only the keys that received a delivery inside its
window. Each refusal here is a spec whose meaning would need rows outside that
window, or whose promise (no row vanishes) would need somewhere to put a row
that arrives too late.
"""

from __future__ import annotations

from .context import Context


def check_incremental(ctx: Context) -> None:
    for name, (file, ent) in sorted(ctx.entities.items()):
        where = f"entity `{name}`"
        if ent.incremental is not None and ent.materialized != "incremental":
            ctx.report(
                file,
                ent.line("incremental"),
                f"{where} declares `incremental:` but is not incremental; add `materialized: incremental` "
                "to build it from new deliveries only, or remove the `incremental:` block.",
            )
        if ent.materialized != "incremental":
            continue
        line = ent.line("materialized")
        if ent.scd == "type2":
            ctx.report(
                file,
                line,
                f"{where} is `scd: type2` and `materialized: incremental`; a type-2 entity is versioned by a "
                "dbt snapshot, which already keeps what earlier builds saw. Remove `materialized: incremental`.",
            )
            continue
        if ent.quarantine is None or not ent.quarantine.retention:
            # A row arriving older than the window is diverted to the reject table, raw payload included.
            ctx.report(
                file,
                line,
                f"{where} is `materialized: incremental`, which sends rows arriving older than its window "
                "to the reject table with their raw payload, and it has no `quarantine.retention`; add "
                "`quarantine: {retention: 90d}` to the entity (hours, days or weeks: `6h`, `90d`, `2w`).",
            )
        for mfile, m in ctx.mappings_of(name):
            for col, fm in list(m.key.items()) + list(m.fields.items()):
                for rule in fm.quality:
                    if rule.rule == "unique":
                        ctx.report(
                            mfile,
                            rule.line() or fm.line(),
                            f"rule `unique` on `{col}` of `{name}` compares a row with the winners of every other "
                            f"key, and an incremental build re-reads only the keys it received; make `{name}` "
                            "`materialized: table`, or remove the rule.",
                        )
