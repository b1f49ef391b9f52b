"""What `quarantine.redact` paths mean (decision 0943): one place for the path algebra that
validation, lowering and the commands that show bronze values share.

A redaction is a path `$.<bronze column>` or `$.<json column>.<key>...`. The IR keeps each one as
dotted text relative to `$.` (`phone`, `payload.ssn`): bronze column names and JSON keys are
identifiers (`validate.mappings.PATH`), so a dot never occurs inside a part.

- A one-part path removes the whole column from a reject row's `raw`.
- A longer path removes that key from the JSON document the column holds. A value that is not a
  JSON document the engine reads cannot be rewritten and may hold the secret: NOT_JSON stands in
  its place, text that is not JSON either, so replay judges the row as the build did (a path read
  of it is a coercion failure, decision 1123).

Two paths *intersect* when one is a prefix of the other (compared part by part): a field reading
the redacted value or something inside it, or reading a document that contains it, would read
different data after a redaction, and replay re-runs the mapping against `raw`.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Optional

Path = tuple[str, ...]

# What a reject row keeps of a value that is not JSON: spelt the same by the dbt package's
# row_json and assay_sqlmesh.redact_json (tests/unit/test_redaction.py holds them to it).
NOT_JSON = "(redacted: not JSON)"


def intersects(a: Path, b: Path) -> bool:
    """Whether one path is a prefix of the other (equal paths included)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def normalized(paths: Iterable[Path]) -> tuple[str, ...]:
    """The redaction as the IR keeps it: dotted, sorted, each once, and a path inside one that is
    redacted already left out (`payload` covers `payload.ssn`)."""
    unique = sorted(set(paths), key=lambda p: (len(p), p))
    kept: list[Path] = []
    for p in unique:
        if not any(intersects(p, k) for k in kept):
            kept.append(p)
    return tuple(sorted(".".join(p) for p in kept))


def parts(entry: str) -> Path:
    """`payload.ssn` -> ('payload', 'ssn')."""
    return tuple(entry.split("."))


def columns(redact: Iterable[str]) -> list[str]:
    """The bronze columns a redaction touches, whole or inside: what a consumer that can only
    keep or drop whole columns (lineage of a SQL check's output) must treat as private."""
    return sorted({parts(e)[0] for e in redact})


def whole_columns(redact: Iterable[str]) -> list[str]:
    """The columns removed whole."""
    return sorted(e for e in redact if "." not in e)


def inside(redact: Iterable[str]) -> dict[str, list[Path]]:
    """column -> the key paths removed inside its JSON document, sorted."""
    out: dict[str, list[Path]] = {}
    for e in sorted(redact):
        p = parts(e)
        if len(p) > 1:
            out.setdefault(p[0], []).append(p[1:])
    return out


def _remove(doc: Any, keys: Path) -> None:
    for k in keys[:-1]:
        if not isinstance(doc, dict) or k not in doc:
            return
        doc = doc[k]
    if isinstance(doc, dict):
        doc.pop(keys[-1], None)


def redacted_text(text: Optional[str], paths: list[Path]) -> Optional[str]:
    """A column's text with `paths` removed from its JSON document, as the reject row keeps it;
    NOT_JSON when it is not JSON. For values read back from a warehouse (`assay explain` shows
    bronze rows, the report shows `raw` written before the redaction)."""
    if text is None or not paths:
        return text
    try:
        doc = json.loads(text)
    except ValueError:
        return NOT_JSON
    for p in paths:
        _remove(doc, p)
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def redacted_row(values: dict[str, Any], redact: Iterable[str]) -> dict[str, Any]:
    """A bronze row (column -> value) as a reject row may keep it: whole redacted columns left
    out, the JSON of the others rewritten (`redacted_text`)."""
    redact = list(redact)
    whole, nested = set(whole_columns(redact)), inside(redact)
    out: dict[str, Any] = {}
    for k, v in values.items():
        if k in whole:
            continue
        if k in nested and v is not None:
            v = redacted_text(v, nested[k]) if isinstance(v, str) else _redacted_object(v, nested[k])
        out[k] = v
    return out


def _redacted_object(value: Any, paths: list[Path]) -> Any:
    # a driver that parses a JSON column hands back a dict or list: edit a copy (a scalar holds no key)
    if not isinstance(value, (dict, list)):
        return value
    doc = json.loads(json.dumps(value))
    for p in paths:
        _remove(doc, p)
    return doc
