"""What assay shows of a value outside the tables the spec governs (issue 19, docs/operating.md
"What is shown where").

The entity tables hold every value; access to them is the warehouse's grants. Everything else
assay prints or writes for people to read (the report page and its JSON, `assay explain`, `assay
check rows`) is meant to be shared, so it never carries:

- the value of a field classified `pii`, nor of the bronze columns such a field is read from: the
  field is named and its value replaced by `HIDDEN`, so a reader still sees which field a rule
  judged;
- a bronze column `quarantine.redact` names: left out entirely (its payload was never kept);
  a key a redaction names inside a JSON column: removed from the document shown, and a value of
  such a column that is not JSON is left out whole (decision 0943, `redaction.py`).

One place decides, so a new command cannot show what the report hides.
"""

from __future__ import annotations

import re

from typing import Any, Iterable, Mapping

from .ir.model import Entity, Project
from .redaction import redacted_row

PII = "pii"
HIDDEN = "(pii: not shown)"
REDACTED = "(redacted: not shown)"


def pii_columns(entity: Entity) -> frozenset[str]:
    """The entity's columns classified `pii`."""
    return frozenset(c.name for c in entity.columns if c.classification == PII)


def pii_bronze_columns(entity: Entity) -> frozenset[str]:
    """The bronze columns a `pii` field is read from (the top of its path), in any mapping."""
    private = pii_columns(entity)
    return frozenset(f.bronze_column for m in entity.mappings for f in m.fields if f.column in private)


def pii_paths(entity: Entity) -> frozenset[str]:
    """The bronze paths (`$.payload.operator`) a `pii` field is read from, in any mapping: a value
    read at another path of the same JSON column is no pii value."""
    private = pii_columns(entity)
    return frozenset("$." + ".".join(f.path) for m in entity.mappings for f in m.fields if f.column in private)


def hidden_names(entity: Entity) -> frozenset[str]:
    """Every name whose value is never shown: pii columns and the bronze columns they come from."""
    return pii_columns(entity) | pii_bronze_columns(entity)


def shown_values(values: Mapping[str, Any], hidden: Iterable[str], redacted: Iterable[str] = ()) -> dict[str, Any]:
    """`values` as assay may show them: `redacted` entries (`quarantine.redact`, as the IR keeps
    it) removed, `hidden` values replaced by HIDDEN (a missing value stays None: that there was
    none is no private fact)."""
    hidden = frozenset(hidden)
    return {k: (HIDDEN if k in hidden and v is not None else v) for k, v in redacted_row(dict(values), redacted).items()}


def holds_private(project: Project) -> bool:
    """Whether any entity of the spec has a `pii` field or a `quarantine.redact` path."""
    return any(hidden_names(e) or e.redact for e in project.entities)


# Where DuckDB, PostgreSQL and Spark quote the value they refused (`invalid input syntax for type
# date: "..."`, `Could not convert string '...'`).
QUOTED_HIDDEN = "(a quoted value: not shown)"
NUMBER_HIDDEN = "(a number: not shown)"
#: A number standing alone in a message (not part of a name such as INT64); the package's
#: `_quoted_hidden` holds the same pattern.
BARE_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-+]?[0-9]+(?:[.][0-9]+)?(?:[eE][-+]?[0-9]+)?(?![A-Za-z0-9_])")


def quoted_hidden(text: str) -> str:
    """`text` with everything from the first to the last quote of each kind replaced, and every
    number standing alone. A value may itself hold quotes (`x'SECRET'y`) or line breaks, so quoted
    runs are not matched pairwise, and a quote left unclosed hides the rest of the text (an outside
    tester, session 37, read both). A type's digits (INT64) are part of its name and stay."""
    out = text
    for quote in ("'", '"'):
        first, last = out.find(quote), out.rfind(quote)
        if first == -1:
            continue
        out = out[:first] + QUOTED_HIDDEN + out[(last + 1 if last > first else len(out)):]
    # Some messages give the value bare (DuckDB: `Type INT64 with value 98765432109 can't be cast`,
    # `Overflow in multiplication of INT64 (N * M)!`; an outside tester, session 40).
    return BARE_NUMBER.sub(NUMBER_HIDDEN, out)


#: Spark's error class, which opens its messages (`[CAST_INVALID_INPUT] The value ...`).
_SPARK_CLASS = re.compile(r"\[([A-Z][A-Z0-9_.]*)\]")
MESSAGE_WITHHELD = "the rest of the engine's message is withheld: it may give a pii or redacted value"


def engine_message(text: str) -> str:
    """An engine's error message as assay prints or records it for a spec that `holds_private`:
    only the kind of error, which is the engine's own words before the value (DuckDB's `Invalid
    Input Error`, PostgreSQL's `invalid input syntax for type integer`, Spark's error class), and a
    sentence saying the rest is withheld (decision 1145). Engines give a refused value quoted, bare
    (`Invalid Input Error: <the value>` of DuckDB's `error()`, a regex built from a value) or on a
    line of its own under a caret, so no scrub of the text can be sure; what comes before the first
    colon of the first line is fixed text. A message without a colon is kept with its quoted runs
    and bare numbers hidden (PostgreSQL's `division by zero`, `column "x" does not exist`)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return text
    first = lines[0]
    spark = _SPARK_CLASS.match(first)
    if spark:
        head, cut = spark.group(1), True
    elif ":" in first:
        head, cut = first[:first.index(":")].strip(), True
    else:
        head, cut = first, len(lines) > 1
    head = quoted_hidden(head)
    if not cut:
        return head
    return f"{head} ({MESSAGE_WITHHELD})" if head else MESSAGE_WITHHELD[0].upper() + MESSAGE_WITHHELD[1:]
