"""The `assay explain` command line the report prints beside each example row (issue 19; decision
0990): copied into a terminal in the project directory, it explains that row.

A command is built from what the page may show only (privacy.py): when a key column is classified
`pii` the key is never printed; the row is then explained by its `_source_row_id` (an id the
loader gave it, not a value of the data), and the page says why. A key that is missing or null in
the example (a key that did not cast, a redacted column) is explained the same way.
"""

from __future__ import annotations

import shlex
from typing import Any, Iterable, Optional

from ..ir.model import Entity
from ..privacy import HIDDEN

SOURCE_ROW_ID = "_source_row_id"


def explain_command(e: Entity, example: dict[str, Any], hidden: Iterable[str], redacted: Iterable[str] = (),
                    options: tuple[str, ...] = ()) -> dict[str, Optional[str]]:
    """{"command": the command line or None, "note": why it is by source row, or why there is none}.

    `example` is a gathered example row ({"key": {...} as shown, "source_row_id": ...}); `options`
    are the report's own `--target` / `--environment` options, repeated so the command reads the
    same warehouse."""
    hidden, redacted = frozenset(hidden), frozenset(redacted)
    tail = "".join(f" {shlex.quote(o)}" for o in options)
    key = example.get("key") if isinstance(example.get("key"), dict) else {}
    private = [k for k in e.key if k in hidden]
    values = [key.get(k) for k in e.key]
    note = None
    if not private and all(v is not None and v != HIDDEN for v in values):
        # options first, then the key; `--` keeps a key such as `-5` from being read as an option
        dashes = " --" if any(str(v).startswith("-") for v in values) else ""
        return {"command": f"assay explain {shlex.quote(e.name)}{tail}{dashes} " + " ".join(shlex.quote(str(v)) for v in values),
                "note": None}
    if private:
        note = f"the key ({', '.join(private)}) is classified pii, so no command with it is printed; this one names the source row"
    else:
        note = "the row's key is not known here (it did not cast, or is not shown), so this command names the source row"
    srid = example.get("source_row_id")
    if srid is None or SOURCE_ROW_ID in hidden or SOURCE_ROW_ID in redacted:
        return {"command": None, "note": (note or "").split(", so ")[0] + ": no command can be printed without it"}
    return {"command": f"assay explain {shlex.quote(e.name)} --source-row-id={shlex.quote(str(srid))}{tail}"
            if str(srid).startswith("-") else f"assay explain {shlex.quote(e.name)} --source-row-id {shlex.quote(str(srid))}{tail}",
            "note": note}
