"""How a refused spec is printed by every command but `validate`: each problem on its line, and a
warning beside them shown as one and not counted (an outside tester, session 41: `generate
sqlmesh` listed a skip-warning unmarked and said "2 problems" where `validate` said 1)."""

from __future__ import annotations

from assay.errors import Diagnostic, SpecError


def test_a_warning_beside_the_refusals_is_marked_and_not_counted():
    error = SpecError([Diagnostic("spec/t.yml", 7, "skipped on sqlmesh", "UNSUPPORTED_BY_TARGET", "warning"),
                       Diagnostic("spec/t.yml", 6, "refused on sqlmesh", "UNSUPPORTED_BY_TARGET")])
    assert [error.render(d) for d in error.diagnostics] == [
        "spec/t.yml:6: UNSUPPORTED_BY_TARGET: refused on sqlmesh",
        "spec/t.yml:7: warning: UNSUPPORTED_BY_TARGET: skipped on sqlmesh"]
    assert error.message.startswith("1 problem found in the spec; nothing was changed.")
    assert error.out == [error.render(d) for d in error.diagnostics]
