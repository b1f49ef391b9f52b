"""Load: read a spec directory into grammar models, each value with its file and line.

This is the only stage that touches the file system for reading a spec. It
never raises on a user's mistake: every problem becomes a Diagnostic, and the
documents that parsed are returned beside them so that validation can report
the rest of the project's problems in the same run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ValidationError

from ..errors import Diagnostic
from .models import (
    DOCUMENT_KINDS,
    SKIPPED_KINDS,
    EntityDocument,
    MappingDocument,
    ProjectSettings,
    TablesDocument,
)
from .yamlload import LineDict, LineList, YamlSyntaxError, load_yaml

SETTINGS_FILE = "assay.yml"


@dataclass
class LoadedSpec:
    """Everything read from one project, before validation."""

    root: Path
    settings: ProjectSettings
    entity_docs: list[tuple[str, EntityDocument, LineDict]] = field(default_factory=list)
    mapping_docs: list[tuple[str, MappingDocument, LineDict]] = field(default_factory=list)
    table_docs: list[tuple[str, TablesDocument, LineDict]] = field(default_factory=list)
    check_files: list[tuple[str, str]] = field(default_factory=list)  # (relative path, text)
    checks_dir: str = "checks"
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, kind)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    # Entities named in the spec, including ones whose own grammar is broken, so that
    # references to them are not reported a second time as unknown.
    known_entities: set = field(default_factory=set)


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def _walk_raw(raw: Any, loc: tuple) -> tuple[Any, Any, int]:
    """Follow a pydantic error location through the raw YAML; return (container, last key, line)."""
    node, parent, last = raw, None, None
    line = getattr(raw, "line", 1) or 1
    for part in loc:
        if isinstance(node, LineDict) and isinstance(part, str) and part in node:
            line = node.line_of(part)
            parent, last, node = node, part, node[part]
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            line = node.line_of(part)
            parent, last, node = node, part, node[part]
        elif isinstance(node, LineDict) and isinstance(part, str):
            # A discriminator tag pydantic inserts into the location, or a missing key.
            parent, last = node, part
            continue
        else:
            continue
    return parent, last, line


def _fields_of(model: type[BaseModel], loc: tuple) -> list[str]:
    """Accepted keys of the model node at `loc` (for 'did you mean')."""
    from . import models as m

    current: Any = model
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            for name, info in current.model_fields.items():
                if (info.alias or name) == part:
                    current = _inner_model(info.annotation, None)
                    break
            else:
                # union tags: pick the member whose `rule` literal matches
                tagged = _rule_member(part)
                if tagged is not None:
                    current = tagged
                continue
        elif part in m.__dict__:
            continue
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted((info.alias or name) for name, info in current.model_fields.items())
    return []


def _inner_model(annotation: Any, _default: Any) -> Any:
    import typing

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _inner_model(arg, None)
        if found is not None:
            return found
    return None


def _rule_member(tag: Any) -> Optional[type]:
    from . import models as m

    for cls in vars(m).values():
        if isinstance(cls, type) and issubclass(cls, BaseModel) and "rule" in getattr(cls, "model_fields", {}):
            ann = cls.model_fields["rule"].annotation
            import typing

            if tag in typing.get_args(ann):
                return cls
    return None


def _describe(loc: tuple) -> str:
    parts = [str(p) if not isinstance(p, int) else f"[{p}]" for p in loc]
    out = ""
    for p in parts:
        out += p if p.startswith("[") or not out else "." + p
    return out or "document"


def pydantic_diagnostics(file: str, model: type[BaseModel], raw: Any, exc: ValidationError) -> list[Diagnostic]:
    """Turn pydantic's errors into file:line diagnostics with a sentence saying what to write."""
    out: list[Diagnostic] = []
    seen: set = set()
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        kind = err.get("type", "")
        parent, last, line = _walk_raw(raw, loc)
        where = _describe(loc[:-1]) if loc else "document"
        key = loc[-1] if loc else ""
        if kind == "extra_forbidden":
            accepted = _fields_of(model, loc[:-1])
            guess = difflib.get_close_matches(str(key), accepted, n=1)
            hint = f" Did you mean `{guess[0]}`?" if guess else ""
            msg = (
                f"`{key}` is not a key of {where}.{hint} Accepted keys: "
                + ", ".join(f"`{a}`" for a in accepted)
                + "."
            )
        elif kind == "missing":
            msg = f"{where} has no `{key}`; write `{key}:` there, it is required."
        elif kind == "union_tag_invalid":
            tags = err.get("ctx", {}).get("expected_tags", "")
            msg = f"{where} has rule `{err.get('input', {}).get('rule') if isinstance(err.get('input'), dict) else err.get('input')}`, which is not a rule kind here; write one of {tags}."
            if isinstance(parent, LineDict) and "rule" in parent:
                line = parent.line_of("rule")
        elif kind == "union_tag_not_found":
            msg = f"{_describe(loc)} names no `rule:`; write `rule: <kind>` first."
        elif kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            msg = f"{_describe(loc)} is {err.get('input')!r}; write one of {expected}."
        elif kind == "string_pattern_mismatch":
            pattern = err.get("ctx", {}).get("pattern", "")
            if "hdw" in pattern:
                msg = f"{_describe(loc)} is {err.get('input')!r}, not a duration; write hours, days or weeks such as `6h`, `90d`, `2w`."
            else:
                msg = f"{_describe(loc)} is {err.get('input')!r}; a name is lower-case letters, digits and `_`, starting with a letter."
        else:
            msg = f"{_describe(loc)}: {err.get('msg', 'invalid value')}."
        ident = (line, msg)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(Diagnostic(file, line, msg, "SPEC_GRAMMAR"))
    return out


def attach_lines(node: Any, raw: Any) -> None:
    """Copy the YAML positions onto validated models, recursively."""
    if isinstance(node, BaseModel):
        if isinstance(raw, LineDict):
            node._line = raw.line
            node._key_lines = dict(raw.key_lines)
        for name, info in type(node).model_fields.items():
            key = info.alias or name
            if isinstance(raw, dict) and key in raw:
                attach_lines(getattr(node, name), raw[key])
    elif isinstance(node, dict) and isinstance(raw, dict):
        for k, v in node.items():
            if k in raw:
                attach_lines(v, raw[k])
    elif isinstance(node, list) and isinstance(raw, list):
        for item, raw_item in zip(node, raw):
            attach_lines(item, raw_item)


def _duplicate_keys(file: str, raw: Any) -> list[Diagnostic]:
    out = []
    if isinstance(raw, LineDict):
        for key, line in raw.key_lines.get("__duplicate__", []):
            out.append(Diagnostic(file, line, f"`{key}` appears twice in one mapping; keep one of them.", "SPEC_GRAMMAR"))
        for v in raw.values():
            out.extend(_duplicate_keys(file, v))
    elif isinstance(raw, LineList):
        for v in raw:
            out.extend(_duplicate_keys(file, v))
    return out


def load_settings(root: Path) -> tuple[ProjectSettings, list[Diagnostic]]:
    """Read `assay.yml` (all keys optional); a missing file means all defaults."""
    path = root / SETTINGS_FILE
    if not path.exists():
        return ProjectSettings(), []
    text = path.read_text(encoding="utf-8")
    try:
        raw = load_yaml(text) or LineDict()
    except YamlSyntaxError as exc:
        return ProjectSettings(), [Diagnostic(SETTINGS_FILE, exc.line, f"not valid YAML: {exc.message}", "SPEC_YAML")]
    try:
        settings = ProjectSettings.model_validate(raw)
    except ValidationError as exc:
        return ProjectSettings(), pydantic_diagnostics(SETTINGS_FILE, ProjectSettings, raw, exc)
    return settings, _duplicate_keys(SETTINGS_FILE, raw)


def load_spec(root: Path | str) -> LoadedSpec:
    """Read every YAML document and SQL check file of the project at `root`."""
    root = Path(root)
    settings, diags = load_settings(root)
    spec_root = (root / settings.specs).resolve() if settings.specs != "." else root
    loaded = LoadedSpec(root=root, settings=settings, diagnostics=list(diags))
    checks_dir = root / settings.checks.dir
    loaded.checks_dir = settings.checks.dir
    yaml_files = sorted(
        p
        for p in list(spec_root.rglob("*.yml")) + list(spec_root.rglob("*.yaml"))
        if p.name != SETTINGS_FILE
        and not _is_under(p, checks_dir)
        and not any(part.startswith(".") or part in {"target", "dbt_packages", "logs"} for part in p.relative_to(spec_root).parts[:-1])
    )
    for path in yaml_files:
        rel = _rel(path, root)
        loaded.files.append(rel)
        _load_document(loaded, rel, path.read_text(encoding="utf-8"))
    if checks_dir.is_dir():
        for path in sorted(checks_dir.rglob("*.sql")):
            loaded.check_files.append((_rel(path, root), path.read_text(encoding="utf-8")))
    return loaded


def _salvage(loaded: LoadedSpec, model, raw: LineDict):
    """Keep the well-formed entities of a document that has a broken one.

    Without this, one typo in one entity would hide every other problem of the
    project behind "not a declared entity" echoes.
    """
    if model is not EntityDocument:
        return None
    entities = raw.get("entities")
    if isinstance(entities, dict):
        for name in entities:
            loaded.known_entities.add(str(name))
    from .models import Entity

    trimmed = LineDict(raw)
    trimmed.line, trimmed.key_lines = raw.line, dict(raw.key_lines)
    good = LineDict()
    good.line = getattr(entities, "line", raw.line)
    good.key_lines = dict(getattr(entities, "key_lines", {}))
    if isinstance(entities, dict):
        for name, body in entities.items():
            try:
                Entity.model_validate(body)
            except ValidationError:
                continue
            good[name] = body
    trimmed["entities"] = good
    for key in ("relationships", "coverage", "reconcile"):
        try:
            model.model_validate({"spec_version": 1, key: raw.get(key, [])})
        except ValidationError:
            trimmed[key] = LineList()
            trimmed[key].line, trimmed[key].item_lines = raw.line, []
    try:
        return model.model_validate(trimmed)
    except ValidationError:
        return None


def _is_under(path: Path, directory: Path) -> bool:
    try:
        path.resolve().relative_to(directory.resolve())
        return True
    except ValueError:
        return False


def _load_document(loaded: LoadedSpec, rel: str, text: str) -> None:
    try:
        raw = load_yaml(text)
    except YamlSyntaxError as exc:
        loaded.diagnostics.append(Diagnostic(rel, exc.line, f"not valid YAML: {exc.message}", "SPEC_YAML"))
        return
    if raw is None:
        return
    if not isinstance(raw, LineDict):
        loaded.diagnostics.append(
            Diagnostic(rel, getattr(raw, "line", 1) or 1, "a spec document is a mapping that starts with a version key such as `spec_version: 1` or `mapping_version: 1`.", "SPEC_GRAMMAR")
        )
        return
    kinds = [k for k in DOCUMENT_KINDS if k in raw]
    if not kinds:
        skipped = [k for k in raw if k in SKIPPED_KINDS or k.endswith("_version")]
        if skipped:
            loaded.skipped.append((rel, skipped[0]))
            return
        loaded.diagnostics.append(
            Diagnostic(rel, raw.line, "this document has no version key; start it with `spec_version: 1` (entities), `mapping_version: 1` (a mapping) or `tables_version: 1` (checks on tables assay does not build).", "SPEC_GRAMMAR")
        )
        return
    if len(kinds) > 1:
        loaded.diagnostics.append(
            Diagnostic(rel, raw.line_of(kinds[1]), f"one document carries both `{kinds[0]}` and `{kinds[1]}`; split it into two files.", "SPEC_GRAMMAR")
        )
        return
    model = DOCUMENT_KINDS[kinds[0]]
    loaded.diagnostics.extend(_duplicate_keys(rel, raw))
    try:
        doc = model.model_validate(raw)
    except ValidationError as exc:
        loaded.diagnostics.extend(pydantic_diagnostics(rel, model, raw, exc))
        doc = _salvage(loaded, model, raw)
        if doc is None:
            return
    attach_lines(doc, raw)
    if isinstance(doc, EntityDocument):
        loaded.known_entities.update(doc.entities)
        loaded.entity_docs.append((rel, doc, raw))
    elif isinstance(doc, MappingDocument):
        loaded.mapping_docs.append((rel, doc, raw))
    else:
        loaded.table_docs.append((rel, doc, raw))
