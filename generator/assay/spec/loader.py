"""Load: read a spec directory into grammar models, each value with its file and line.

This is the only stage that touches the file system for reading a spec. It
never raises on a user's mistake: every problem becomes a Diagnostic, and the
documents that parsed are returned beside them so that validation can report
the rest of the project's problems in the same run.
"""

from __future__ import annotations

import os
import re
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
from .files import is_dir as _is_dir, spec_yaml_files
from .grammar_errors import pydantic_diagnostics
from .yamlload import LineDict, LineList, YamlSyntaxError, load_yaml, non_finite_problem

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
    # Entities that a mapping which did not load targets: "no mapping feeds" would be an echo.
    fed_entities: set = field(default_factory=set)
    # Relationships named in a document whose grammar is broken: "not declared" would be an echo.
    known_relationships: set = field(default_factory=set)
    # The text of every spec document that does not parse (YAML or encoding): a name written in
    # one as a key may be declared there, so a reference to it is not refused as unknown.
    unparsed_texts: list = field(default_factory=list)

    @property
    def holds_nothing(self) -> bool:
        """No spec document was read and nothing was said of one: a folder that is no spec."""
        return not self.files and not self.diagnostics

    def may_declare(self, name: str) -> bool:
        """Whether a spec document that does not parse names `name` as a key (`name:` at the
        start of a line, or in a flow mapping): what it declares is unknown, so a reference to
        `name` is not reported as a reference to nothing (decision 0028, second amendment)."""
        pattern = re.compile(r"(^|[{,])\s*[\"']?" + re.escape(name) + r"[\"']?\s*:", re.M)
        return any(pattern.search(text) for text in self.unparsed_texts)


def _rel(path: Path, root: Path) -> str:
    # Relative to the project root whatever the caller passed (relative root, `specs:`
    # pointing into or out of it): file names end up in the IR, which must not depend
    # on where the project sits. The folder is resolved, not the file: a spec file that is a
    # symbolic link is named as the user sees it in the folder, not by where it points.
    return Path(os.path.relpath(path.parent.resolve() / path.name, root.resolve())).as_posix()


def attach_lines(node: Any, raw: Any, key_line: int = 0) -> None:
    """Copy the YAML positions onto validated models, recursively.

    A node written under a key (`orders:`, `quarantine:`, `amount:`) is placed on
    that key's line, where a reader looks for it, rather than on the first line of
    its body.
    """
    if isinstance(node, BaseModel):
        if isinstance(raw, LineDict):
            node._line = key_line or raw.line
            node._key_lines = dict(raw.key_lines)
        for name, info in type(node).model_fields.items():
            key = info.alias or name
            if isinstance(raw, LineDict) and key in raw:
                attach_lines(getattr(node, name), raw[key], raw.line_of(key))
    elif isinstance(node, dict) and isinstance(raw, dict):
        for k, v in node.items():
            if k in raw:
                attach_lines(v, raw[k], raw.line_of(k) if isinstance(raw, LineDict) else 0)
    elif isinstance(node, list) and isinstance(raw, list):
        for item, raw_item in zip(node, raw):
            attach_lines(item, raw_item)


def _duplicate_keys(file: str, raw: Any) -> list[Diagnostic]:
    out = []
    if isinstance(raw, LineDict):
        for key, line in raw.key_lines.get("__duplicate__", []):
            first = raw.key_lines.get(key, raw.line)
            out.append(Diagnostic(file, line, f"`{key}` is written twice at the same level (first on line {first}); YAML would keep only the last one silently, so keep one of them.", "SPEC_GRAMMAR"))
        for v in raw.values():
            out.extend(_duplicate_keys(file, v))
    elif isinstance(raw, LineList):
        for v in raw:
            out.extend(_duplicate_keys(file, v))
    return out


def _non_finite(file: str, raw: Any) -> list[Diagnostic]:
    # Wherever it stands: every literal of a spec reaches SQL, and none can be NaN or infinite.
    return [Diagnostic(file, line, non_finite_problem(written, value), "SPEC_GRAMMAR")
            for line, written, value in getattr(raw, "non_finite", ())]


def load_settings(root: Path) -> tuple[ProjectSettings, list[Diagnostic]]:
    """Read `assay.yml` (all keys optional); a missing file means all defaults."""
    path = root / SETTINGS_FILE
    if not path.exists():
        return ProjectSettings(), []
    text, problem = read_spec_file(path, SETTINGS_FILE)
    if problem is not None:
        return ProjectSettings(), [problem]
    try:
        raw = load_yaml(text) or LineDict()
    except YamlSyntaxError as exc:
        return ProjectSettings(), [Diagnostic(SETTINGS_FILE, exc.line, f"not valid YAML: {exc.message}", "SPEC_YAML")]
    try:
        settings = ProjectSettings.model_validate(raw)
    except ValidationError as exc:
        return _valid_settings(raw), pydantic_diagnostics(SETTINGS_FILE, ProjectSettings, raw, exc) + _non_finite(SETTINGS_FILE, raw)
    attach_lines(settings, raw)
    return settings, _duplicate_keys(SETTINGS_FILE, raw) + _non_finite(SETTINGS_FILE, raw)


def _valid_settings(raw: Any) -> ProjectSettings:
    """The settings of `assay.yml` whose own values are valid, beside one that is not: the spec
    folder and the check files are still found where it says, so one wrong value does not make
    every other YAML file of the project an echoed problem (`dbt_project.yml: no version key`)."""
    kept = {}
    for key, value in (raw.items() if isinstance(raw, dict) else ()):
        try:
            ProjectSettings.model_validate({key: value})
        except ValidationError:
            continue
        kept[key] = value
    settings = ProjectSettings.model_validate(kept)
    attach_lines(settings, raw)
    return settings


def load_spec(root: Path | str) -> LoadedSpec:
    """Read every YAML document and SQL check file of the project at `root`."""
    root = Path(root)
    settings, diags = load_settings(root)
    spec_root = (root / settings.specs).resolve() if settings.specs != "." else root
    loaded = LoadedSpec(root=root, settings=settings, diagnostics=list(diags))
    checks_dir = root / settings.checks.dir
    loaded.checks_dir = settings.checks.dir
    if not _is_dir(spec_root):
        # Reading nothing would pass as an empty spec; name the setting that points nowhere.
        loaded.diagnostics.append(Diagnostic(
            SETTINGS_FILE, settings.line("specs") or 1,
            f"`specs: {settings.specs}` names no directory beside {SETTINGS_FILE}; write the folder that holds "
            "your spec YAML files, relative to assay.yml (or `.` for this one).", "SPEC_SETTINGS",
        ))
        return loaded
    yaml_files, unreadable = spec_yaml_files(spec_root, root, (SETTINGS_FILE,), checks_dir)
    for folder, reason in unreadable:
        loaded.diagnostics.append(Diagnostic(folder, 1, f"this folder cannot be read ({reason}), so the spec documents in it are not; make it readable or move it out of the spec directory.", "SPEC_UNREADABLE"))
    for path, rel in yaml_files:
        loaded.files.append(rel)
        text, problem = read_spec_file(path, rel)
        if problem is not None:
            loaded.diagnostics.append(problem)
            # What can be read of it still names its entities and target, so that the rest of
            # the project does not echo the one problem as "no mapping feeds" refusals.
            _remember_unparsed(loaded, text)
            continue
        _load_document(loaded, rel, text)
    if _is_dir(checks_dir):
        for path in sorted(checks_dir.rglob("*.sql")):
            rel = _rel(path, root)
            text, problem = read_spec_file(path, rel)
            if problem is not None:
                loaded.diagnostics.append(problem)
                continue
            loaded.check_files.append((rel, text))
    return loaded


def read_spec_file(path: Path, rel: str) -> tuple[str, Optional[Diagnostic]]:
    """The text of one spec file, and a diagnostic saying why it cannot be read and what to do.

    With a diagnostic, the text is what could be read (undecodable bytes replaced), for
    echo suppression only.

    Spec files are UTF-8. Anything else (a file saved as Latin-1 or UTF-16, stray binary
    bytes, a file the user may not read) is a refusal naming the file and, for bytes that
    do not decode, the byte offset and line of the first one, never a traceback.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return "", Diagnostic(rel, 1, f"cannot be read ({reason}); make it a readable file or move it out of the spec directory.", "SPEC_UNREADABLE")
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        readable = data.decode("utf-8", errors="replace")
        offset = exc.start
        line = data.count(b"\n", 0, offset) + 1
        column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        byte = data[offset]
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            what = "it is saved as UTF-16 (it starts with a UTF-16 byte-order mark)"
            # read as what it is, so the names it declares silence their echoes elsewhere
            readable = data.decode("utf-16", errors="replace")
        else:
            what = f"byte {offset} (line {line}, column {column}) is 0x{byte:02x}, which is not UTF-8"
        return readable, Diagnostic(
            rel, line,
            f"not UTF-8 text: {what}. assay reads spec files as UTF-8; save the file as UTF-8 "
            "(for example `iconv -f <its encoding> -t UTF-8`) or remove the stray bytes.",
            "SPEC_ENCODING",
        )


def _remember_unparsed(loaded: LoadedSpec, text: str) -> None:
    """Read entity names and a mapping target from a file that is not valid YAML.

    Only to keep the rest of the project from reporting echoes ("not a declared
    entity", "no mapping feeds") of the one syntax error already reported.
    """
    loaded.unparsed_texts.append(text)
    target = re.search(r"^target:\s*[\"']?([A-Za-z0-9_]+)", text, re.M)
    if target:
        loaded.fed_entities.add(target.group(1))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not re.match(r"^entities:\s*(#.*)?$", line):
            continue
        indent = None
        for body in lines[i + 1 :]:
            if not body.strip() or body.lstrip().startswith("#"):
                continue
            width = len(body) - len(body.lstrip(" \t"))
            if width == 0:
                break
            indent = width if indent is None else indent
            name = re.match(r"^\s*(?:-\s+)?([A-Za-z0-9_]+)\s*:", body)  # `- order:` too
            if width == indent and name:
                loaded.known_entities.add(name.group(1))


def _load_document(loaded: LoadedSpec, rel: str, text: str) -> None:
    try:
        raw = load_yaml(text)
    except YamlSyntaxError as exc:
        loaded.diagnostics.append(Diagnostic(rel, exc.line, f"not valid YAML: {exc.message}", "SPEC_YAML"))
        _remember_unparsed(loaded, text)
        return
    if raw is None:
        # Said, not refused (decision 0977): like a skipped `metric_version` document it declares
        # nothing, and a placeholder file must not stop a build; but a file whose content was lost
        # must not pass unnoticed either.
        loaded.diagnostics.append(Diagnostic(rel, 1, "this file holds no document (it is empty, or only comments), so it declares nothing; write a spec document in it, starting with `spec_version: 1`, `mapping_version: 1` or `tables_version: 1`, or delete the file.", "SPEC_EMPTY", severity="warning"))
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
    loaded.diagnostics.extend(_duplicate_keys(rel, raw) + _non_finite(rel, raw))
    try:
        doc = model.model_validate(raw)
    except ValidationError as exc:
        loaded.diagnostics.extend(pydantic_diagnostics(rel, model, raw, exc))
        if model is MappingDocument and isinstance(raw.get("target"), str):
            loaded.fed_entities.add(raw["target"])
        from .repair import salvage  # here: repair reads this module's helpers

        salvaged = salvage(loaded, model, raw)
        if salvaged is None:
            return
        doc, raw = salvaged
    attach_lines(doc, raw)
    if isinstance(doc, EntityDocument):
        loaded.known_entities.update(doc.entities)
        loaded.entity_docs.append((rel, doc, raw))
    elif isinstance(doc, MappingDocument):
        loaded.mapping_docs.append((rel, doc, raw))
    else:
        loaded.table_docs.append((rel, doc, raw))
