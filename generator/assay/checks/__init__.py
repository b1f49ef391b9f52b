"""Table checks: the declared kinds of document 000 and the SQL check files of 002.

Submodules:

- :mod:`assay.checks.declared` validates the ``checks:`` list of an entity or a
  ``tables_version: 1`` table and resolves it into frozen :class:`DeclaredCheck` values.
- :mod:`assay.checks.detail` writes the exact pass and fail sentences of 000, the
  ``not_evaluated: `` form, the ``CHECK_FAILED`` failure detail, and the two result shapes
  (the wire shape and the run record).
- :mod:`assay.checks.rates` validates rate thresholds (an entity's ``thresholds:``, a rule's
  ``max_rate``) and lowers each into a declared check of its own (decision 0980).
- :mod:`assay.checks.sqlfile` reads ``checks/<namespace>/<table>/<name>.sql`` files: the
  ``/* assay`` header block, the resolved ``on_failure``, the one-SELECT rule.

Every module here is pure Python (stdlib, sqlglot, PyYAML): nothing imports dbt, SQLMesh or a
database driver. Validation never raises on a user's mistake; it returns :class:`Problem`
values, all of them, so a spec is answered with every refusal at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """One refusal found while reading checks.

    ``code`` is the machine-readable code of the contract (``DECLARED_CHECK_INVALID``,
    ``SQL_CHECK_INVALID`` ...); ``message`` is the sentence without the code prefix;
    ``line`` is the 1-based source line (0 when no line applies); ``file`` is the file the
    problem was found in, when the finder knows it (SQL check files always set it; declared
    checks leave it to the caller, which knows which spec document it read).
    """

    code: str
    message: str
    line: int
    file: Optional[str] = None

    def render(self) -> str:
        """``CODE: message``, the spelling the contract documents use."""
        return f"{self.code}: {self.message}"
