"""Validate: every refusal of a spec, collected project-wide and reported together."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import Diagnostic
from ..spec.loader import LoadedSpec
from .checks import check_budget_names, check_declared, check_sql_files
from .context import build_context
from .dispositions import check_retention, check_type2_keys
from .entities import check_entities
from .incremental import check_incremental
from .mappings import check_mappings
from .names import check_names
from .relations import check_relations
from .targets import check_target
from .thresholds import check_thresholds


@dataclass
class Validated:
    """What validation found: the refusals, and the checks it already normalized."""

    diagnostics: list[Diagnostic]
    declared: dict = field(default_factory=dict)  # owner -> tuple of DeclaredCheck
    sql_checks: list = field(default_factory=list)  # (relative path, SqlCheck)
    parsed: dict = field(default_factory=dict)  # (id(grammar node), what) -> value; see Context.parsed

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.diagnostics)

    def parsed_value(self, node, what: str):
        """What validation parsed from `node` (Context.parsed names the kinds). Resolution reads
        only these, so a path, bound, code point or reconcile side is parsed once."""
        try:
            return self.parsed[(id(node), what)]
        except KeyError:
            raise LookupError(f"validation did not parse the {what} of {type(node).__name__} at line {node.line()}; "
                              "resolve only what validate() accepted") from None

    def field_source(self, fm) -> tuple:
        """(path, steps) of a field mapping as validation parsed them."""
        return self.parsed_value(fm, "source")


def validate(loaded: LoadedSpec, target: Optional[str] = None, dialect: Optional[str] = None) -> Validated:
    """All problems of a loaded project (grammar problems from loading included), sorted.

    With a `target` ("dbt" or "sqlmesh"), also what that target cannot realise
    (validate/targets.py): refused here, so no emitter raises or drops a construct. `dialect`
    (SQLMesh's `--dialect`) adds what the target cannot realise on that dialect.
    """
    ctx = build_context(loaded)
    check_entities(ctx)
    check_mappings(ctx)
    check_names(ctx)
    check_relations(ctx)
    check_retention(ctx)
    check_type2_keys(ctx)
    check_incremental(ctx)
    declared = check_declared(ctx)
    check_budget_names(ctx)
    check_thresholds(ctx)
    sql_checks = check_sql_files(ctx)
    if target is not None:
        ctx.out.extend(check_target(ctx, target, declared, sql_checks, dialect))
    return Validated(sorted(set(loaded.diagnostics) | set(ctx.out)), declared, sql_checks, ctx.parsed)
