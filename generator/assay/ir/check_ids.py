"""The ids a table's checks are reported under in 000's wire shape, one check each (decision 0948).

`assay checks --json` reports every result with 000's `check_id`, `^[A-Z][A-Z0-9_]{0,127}$`: a
declared check's (and a threshold's) id upper-cased, a `fail` rule's or a generated audit's name
upper-cased (the checks that stop a table: decision 0941), and a SQL check file's stem upper-cased
(its table is the result's `scope`). Two checks of one table reported under one id would be one
identity on the wire, and `assay check rows` could not tell them apart; a stem that does not start
with a letter would not match the pattern. Both are refused here, at the SQL check file, where the
file's own name is what the user changes.
"""

from __future__ import annotations

from typing import Iterable

from ..errors import Diagnostic
from ..lower.audits import CONSERVATION_CHECK, INGESTION_CHECK

# The generated audits whose stop an entity's results list under their own id (decision 0941).
ENTITY_AUDIT_IDS = ("KEY_UNIQUE", CONSERVATION_CHECK, INGESTION_CHECK)


def sql_check_id_clashes(owner: str, sql_checks: Iterable[tuple[str, object]],
                         taken: dict[str, str]) -> list[Diagnostic]:
    """The refusals of `owner`'s SQL check files (`(path, SqlCheck)`) whose reported id does not
    start with a letter or is already `taken` ({reported id: what reports it, as a message names
    it}) by a declared check, a threshold, a stopping rule, an audit or another file of the table."""
    out, seen = [], dict(taken)
    for path, check in sorted(sql_checks, key=lambda pc: pc[0]):
        reported = check.reported_id
        if not reported[:1].isalpha():
            out.append(Diagnostic(path, 1, f"SQL check file `{path}` is reported as check `{reported}` (its name upper-cased), "
                                           "and a check's id starts with a letter; rename the file, e.g. "
                                           f"`check{check.check_name}.sql`.",
                                  "SQL_CHECK_INVALID"))
            continue
        if reported in seen:
            out.append(Diagnostic(path, 1, f"SQL check file `{path}` is reported as check `{reported}` (its name upper-cased) "
                                           f"of `{owner}`, and {seen[reported]} already is; each check of a table has its own "
                                           f"id, so rename the file, e.g. `{check.check_name.lower()}_sql.sql`.",
                                  "SQL_CHECK_INVALID"))
            continue
        seen[reported] = f"SQL check file `{path}`"
    return out


def entity_taken_ids(declared: Iterable, rules: Iterable) -> dict[str, str]:
    """{reported id: what reports it} of an entity's checks other than its SQL check files: its
    declared checks and thresholds, its `fail` rules (their stops) and its generated audits."""
    taken = {audit: f"the generated audit {audit}" for audit in ENTITY_AUDIT_IDS}
    taken.update({r.name.upper(): f"the `fail` rule {r.name}" for r in rules if r.disposition == "fail"})
    taken.update(declared_taken_ids(declared))
    return taken


def declared_taken_ids(declared: Iterable) -> dict[str, str]:
    """{reported id: what reports it} of declared checks (thresholds' derived checks included)."""
    return {c.check_id.upper(): f"declared check {c.check_id.upper()}" + (f" (line {c.line})" if getattr(c, "line", None) else "")
            for c in declared}
