"""Load: read a spec directory into grammar models, each value with its file and line.

This is the only stage that touches the file system for reading a spec. It
never raises on a user's mistake: every problem becomes a Diagnostic, and the
documents that parsed are returned beside them so that validation can report
the rest of the project's problems in the same run.
"""

from __future__ import annotations

import difflib
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
from .yamlload import LineDict, LineList, YamlSyntaxError, load_yaml, locate

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


def _quoting_would_not_fit(model: type[BaseModel], loc: tuple, value: Any) -> bool:
    """Whether a number or boolean written where a text is expected would, quoted, still not match
    the field's pattern, so "write it in quotes" would be advice that does not work."""
    pattern = _pattern_of(model, loc) if not isinstance(value, (list, dict)) and value is not None else None
    return pattern is not None and re.fullmatch(pattern, str(value)) is None


def _model_at(model: type[BaseModel], loc: tuple) -> Any:
    """The model node at `loc` (a model class, or what is left of the walk where it ends)."""
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
    return current


def _fields_of(model: type[BaseModel], loc: tuple) -> list[str]:
    """Accepted keys of the model node at `loc` (for 'did you mean')."""
    current = _model_at(model, loc)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted((info.alias or name) for name, info in current.model_fields.items())
    return []


def _pattern_of(model: type[BaseModel], loc: tuple) -> Optional[str]:
    """The regex the text at `loc` must match, when its field declares one."""
    parent = _model_at(model, loc[:-1])
    if not (loc and isinstance(parent, type) and issubclass(parent, BaseModel)):
        return None
    for name, info in parent.model_fields.items():
        if (info.alias or name) == loc[-1]:
            return next((meta.pattern for meta in info.metadata if getattr(meta, "pattern", None)), None)
    return None


def _vocabulary_of(model: type[BaseModel], loc: tuple) -> Optional[tuple[str, str]]:
    """(what the text at `loc` names, the sentence listing what it may be) when it is a closed
    vocabulary that validation judges (a field's `type:`). A number written there quoted would
    still be no such word, so the advice is the vocabulary, not quotes."""
    from ..validate.types import TYPE_ADVICE
    from .models import EntityField

    vocabularies = {(EntityField, "type"): ("a type name", TYPE_ADVICE)}
    return vocabularies.get((_model_at(model, loc[:-1]), loc[-1])) if loc else None


def _pattern_message(path: str, value: Any, pattern: str) -> str:
    """What to write for a text that does not match its field's pattern (a duration or a name)."""
    if "hdw" in pattern:
        return f"{path} is {_show(value)}, not a duration; write hours, days or weeks such as `6h`, `90d`, `2w`."
    return f"{path} is {_show(value)}; a name is lower-case letters, digits and `_`, starting with a letter."


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
    return out or "the document"


def _clean_loc(raw: Any, loc: tuple) -> tuple:
    """`loc` without the union tags pydantic inserts (`quality[0].range.min` -> `quality[0].min`)."""
    node, out = raw, []
    for i, part in enumerate(loc):
        if isinstance(node, LineDict) and isinstance(part, str):
            if part in node:
                node = node[part]
            elif i < len(loc) - 1:
                continue  # a tag: not in the YAML, and something follows it
        elif isinstance(node, LineList) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        out.append(part)
    return tuple(out)


def _tags(text: str) -> list[str]:
    return [t.strip().strip("'") for t in str(text).split(",") if t.strip()]


def _show(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    return f"`{value}`"


# Keys whose absence or misuse has one well-known cause, and the sentence that names it.
_ORPHAN_GATE = "for an orphan that must stop the run, write a `reconcile` check."
_HINTS = {
    ("on_fail", "on_missing"): " A referential rule states `on_missing: unknown_member|quarantine|flag` instead; " + _ORPHAN_GATE,
}


def pydantic_diagnostics(file: str, model: type[BaseModel], raw: Any, exc: ValidationError) -> list[Diagnostic]:
    """Turn pydantic's errors into file:line diagnostics with a sentence saying what to write."""
    out: list[Diagnostic] = []
    seen: set = set()
    errors = exc.errors()
    errors = errors + _errors_of_guessed_kinds(model, raw, errors)
    branches = _union_branches(raw, errors)
    for err in errors:
        loc = tuple(err.get("loc", ()))
        kind = err.get("type", "")
        ctx = err.get("ctx", {}) or {}
        value = err.get("input")
        if loc[:-1] in branches:  # one value tried against each member of a union: one message
            loc, kind = loc[:-1], "union_members"
        parent, last, line = locate(raw, loc)
        shown = _clean_loc(raw, loc)
        path = _describe(shown)
        where = _describe(shown[:-1]) if shown else "the document"
        key = loc[-1] if loc else ""
        above = _field_above(raw, shown, value)
        if above is not None:
            msg = (f"{path} is indented as a field, but `{shown[-1]}` is a key of a field's mapping; indent it "
                   f"under `{above}:`, the field above it.")
        elif _is_entity_key(shown) and not isinstance(value, str) and kind != "missing":
            msg = _entity_key_message(raw, path, value, shown)
        elif kind == "union_members":
            msg = _union_message(path, value, branches[loc], shown)
        elif isinstance(key, int) and len(shown) > 1 and shown[-2] == "quality" and not isinstance(value, dict):
            msg = _rule_item_message(path, value, shown)
        elif kind == "extra_forbidden":
            accepted = _fields_of(model, loc[:-1])
            guess = difflib.get_close_matches(str(key), accepted, n=1)
            hint = f" Did you mean `{guess[0]}`?" if guess else ""
            hint += _HINTS.get((str(key), "on_missing"), "") if "on_missing" in accepted else ""
            msg = (
                f"`{key}` is not a key of {where}.{hint} Accepted keys: "
                + ", ".join(f"`{a}`" for a in accepted)
                + "."
            )
        elif kind == "missing":
            msg = f"{where} has no `{key}`; write `{key}:` there, it is required."
        elif kind == "union_tag_invalid":
            tags = _tags(ctx.get("expected_tags", ""))
            tag = value.get("rule") if isinstance(value, dict) else value
            guess = difflib.get_close_matches(str(tag), tags, n=1)
            hint = f" Did you mean `{guess[0]}`?" if guess else ""
            msg = f"`{tag}` is not a rule kind of {path}.{hint} Write one of " + ", ".join(f"`{t}`" for t in tags) + "."
            if isinstance(parent, LineDict) and "rule" in parent:
                line = parent.line_of("rule")
        elif kind == "union_tag_not_found":
            msg = f"{path} names no `rule:`; write `rule: <kind>` first."
        elif kind == "literal_error" and str(key).endswith("_version"):
            shown = f"the text `{value!r}`" if isinstance(value, str) else _show(value)
            msg = f"{path} is {shown}; assay reads version 1 of this document, write `{key}: 1`."
        elif kind == "literal_error":
            choices = [f"`{t}`" for t in _tags(str(ctx.get("expected", "")).replace(" or ", ", "))]
            msg = f"{path} is {_show(value)}; write " + (f"one of {', '.join(choices)}." if len(choices) > 1 else f"{''.join(choices)}.")
            if key == "on_missing" and value == "fail":
                msg += " `fail` is deliberately unavailable, orphans are expected and recoverable; " + _ORPHAN_GATE
        elif kind == "string_pattern_mismatch":
            msg = _pattern_message(path, value, ctx.get("pattern", ""))
        elif kind == "string_type" and _vocabulary_of(model, loc):
            what, advice = _vocabulary_of(model, loc)
            msg = f"{path} is {_show(value)}, not {what}. {advice}"
        elif kind == "string_type" and _quoting_would_not_fit(model, loc, value):
            # `retention: 7` quoted is `'7'`, still no duration: say what one is instead
            msg = _pattern_message(path, value, _pattern_of(model, loc))
        elif kind == "too_short":
            msg = f"{path} is empty; list at least {ctx.get('min_length', 1)} entry."
        elif kind == "string_type" and value is None:
            msg = f"{path} is empty; write a text there, or leave `{key}` out if it is optional."
        elif kind in ("string_type",):
            msg = f"{path} is {_show(value)}, not text; write it in quotes: `'{value}'`." if not isinstance(value, (list, dict)) else f"{path} is {_show(value)}; write one text."
        elif kind in ("list_type",):
            if value is None:  # a key with nothing after it: an empty list, or leave the key out
                msg = f"{path} is empty; write its items as a list under it, or leave `{loc[-1]}` out."
            elif isinstance(value, dict):
                msg = f"{path} is a mapping; write a list `[...]`."
            else:
                msg = f"{path} is {_show(value)}, not a list; write a list such as `[{value}]`."
        elif kind in ("model_type", "model_attributes_type") and _fields_of(model, loc):
            keys = ", ".join(f"`{a}`" for a in _fields_of(model, loc))
            msg = f"{path} is {_show(value)}, not a mapping; write its keys under it ({keys})."
            for shorthand in ("type", "from", "retention"):  # the key a lone text is the value of
                if isinstance(value, str) and f"`{shorthand}`" in keys:
                    msg = msg[:-1] + f", e.g. `{{{shorthand}: {value}}}`."
                    break
        elif kind in ("dict_type", "model_type", "model_attributes_type"):
            msg = f"{path} is {_show(value)}, not a mapping; write `<name>: ...` entries under it."
            if isinstance(value, list) and value and all(isinstance(v, dict) and len(v) == 1 for v in value):
                msg = msg[:-1] + ", without the leading `- `."
        elif kind in ("bool_type", "bool_parsing"):
            # A text is only a boolean word when it was quoted: unquoted, YAML reads `yes` as true.
            quoted = isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "on", "off")
            msg = f"{path} is {_show(value)}; write `true` or `false`" + (" without quotes." if quoted else ".")
        elif kind in ("int_type", "int_parsing", "int_from_float"):
            msg = f"{path} is {_show(value)}; write a whole number."
        elif kind == "greater_than_equal":
            msg = f"{path} is {_show(value)}; write a number of at least {ctx.get('ge')}."
        else:
            msg = f"{path}: {err.get('msg', 'invalid value')}."
        ident = (line, msg)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(Diagnostic(file, line, msg, "SPEC_GRAMMAR"))
    return out


def _field_above(raw: Any, shown: tuple, value: Any) -> Optional[str]:
    """The field a mapping's `from:`, `transform:` or `quality:` belongs to when it was written at
    a field's indentation (`fields:` then `amount:` then `quality:` at `amount`'s column): the key
    just above it in the same block; None for anything else. Only a value of that key's own shape
    counts (a `$.` path, a list), so a field really named `from` is not taken for one."""
    if len(shown) != 2 or shown[0] not in ("fields", "key") or not isinstance(raw, LineDict):
        return None
    fits = {"from": isinstance(value, str) and value.startswith("$"), "transform": isinstance(value, list),
            "quality": isinstance(value, list)}
    block = raw.get(shown[0])
    if not fits.get(shown[1]) or not isinstance(block, LineDict):
        return None
    here = block.line_of(shown[1])
    earlier = [(block.line_of(k), k) for k in block if k != shown[1] and block.line_of(k) < here]
    return str(max(earlier)[1]) if earlier else None


def _is_entity_key(shown: tuple) -> bool:
    """`entities.<name>.key` or one of its items."""
    return len(shown) in (3, 4) and shown[0] == "entities" and shown[2] == "key"


def _entity_key_message(raw: Any, path: str, value: Any, shown: tuple) -> str:
    """An entity key that names no field (`key: 7`, `key: [7]`, `key: []`): quoting `7` or listing it
    would not make it a field name, so the advice names the entity's first declared field."""
    body = raw.get("entities", {}).get(shown[1]) if isinstance(raw.get("entities"), dict) else None
    fields = body.get("fields") if isinstance(body, dict) else None
    first = next((f for f in fields if isinstance(f, str)), None) if isinstance(fields, dict) else None
    example = f"`[{first}]`" if first else "`[order_id]`"
    if value is None or value == []:
        return f"{path} is empty; list the fields whose values identify a row, such as {example}."
    return f"{path} is {_show(value)}, not a field name; list the fields whose values identify a row, such as {example}."


def guessed_kind(err: dict) -> Optional[str]:
    """The rule kind an unknown `rule:` is a typo of (`nott_null` -> `not_null`), as the message
    of a `union_tag_invalid` error suggests it; None for anything else."""
    if err.get("type") != "union_tag_invalid" or not isinstance(err.get("input"), dict):
        return None
    tags = _tags((err.get("ctx") or {}).get("expected_tags", ""))
    guess = difflib.get_close_matches(str(err["input"].get("rule")), tags, n=1)
    return guess[0] if guess else None


def _errors_of_guessed_kinds(model: type[BaseModel], raw: Any, errors: list) -> list:
    """pydantic's errors inside each rule whose kind is a typo, read as the kind it suggests.

    pydantic stops at an unknown tag of a discriminated union, so `{rule: nott_null, on_fail: drop,
    bogus: 1}` would say only that `nott_null` is no rule kind, and `bogus` would show only once
    the kind is fixed: every problem at once means judging the rest of the rule as the rule it
    evidently is (decision 0028)."""
    import copy

    found: list = []
    for err in errors:
        guess = guessed_kind(err)
        if guess is None:
            continue
        loc = tuple(err.get("loc", ()))
        trial = copy.deepcopy(raw)
        parent, last, _ = locate(trial, loc, tolerant=False)
        if not isinstance(parent, (dict, list)) or last is None or not isinstance(parent[last], dict):
            continue
        parent[last]["rule"] = guess
        try:
            model.model_validate(trial)
        except ValidationError as again:
            found += [e for e in again.errors() if tuple(e.get("loc", ()))[: len(loc)] == loc
                      and e.get("type") != "union_tag_invalid"]
    return found


# What each member of a union of plain values reads, for `_union_message`.
_MEMBER_WORDS = {"str": "a text", "int": "a number", "float": "a number", "bool": "`true` or `false`",
                 "dict[str,any]": "a one-key mapping such as `{to_decimal: [12, 2]}`"}


def _union_branches(raw: Any, errors: list) -> dict:
    """{location of a value: the union members it was tried against} for the errors pydantic
    reports once per member of a union (`values: [[1, 2]]` would read as four problems)."""
    from .standins import real_length

    found: dict = {}
    for err in errors:
        loc = tuple(err.get("loc", ()))
        if err.get("type") == "missing" or len(loc) < 2 or not isinstance(loc[-1], str):
            continue
        if real_length(raw, loc, False) == len(loc) - 1 and loc[-1] in _MEMBER_WORDS:
            found.setdefault(loc[:-1], []).append(loc[-1])
    return {loc: members for loc, members in found.items() if len(members) > 1}


def _union_message(path: str, value: Any, members: list, shown: tuple) -> str:
    if len(shown) > 1 and shown[-2] == "transform":
        return f"{path} is {_show(value)}, not a transform; write a transform name such as `trim`, or a one-key mapping such as `{{to_decimal: [12, 2]}}`."
    words = list(dict.fromkeys(_MEMBER_WORDS[m] for m in members))
    choice = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
    one = " per item" if isinstance(shown[-1], int) else ""
    return f"{path} is {_show(value)}; write one value{one}: {choice}."


def _rule_item_message(path: str, value: Any, shown: tuple) -> str:
    """A rule written as something else than a mapping (`quality: [not_null]`)."""
    from .models import FIELD_RULE_KINDS, ROW_RULE_KINDS

    row = shown[0] == "entities"
    examples = {"expression": '{rule: expression, name: amount_positive, expr: "amount > 0", on_fail: flag}',
                "referential": "{rule: referential, via: <relationship>, on_missing: flag}"}
    if row:
        example = examples.get(str(value), examples["expression"])
    else:
        example = f"{{rule: {value}, on_fail: flag}}" if value in FIELD_RULE_KINDS else "{rule: not_null, on_fail: flag}"
    kinds = ROW_RULE_KINDS if row else FIELD_RULE_KINDS
    return (f"{path} is {_show(value)}, not a rule; write each rule as a mapping such as `{example}`"
            f" (rule kinds: {', '.join(f'`{k}`' for k in kinds)}).")


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
        return _valid_settings(raw), pydantic_diagnostics(SETTINGS_FILE, ProjectSettings, raw, exc)
    attach_lines(settings, raw)
    return settings, _duplicate_keys(SETTINGS_FILE, raw)


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
            name = re.match(r"^\s*([A-Za-z0-9_]+)\s*:", body)
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
    loaded.diagnostics.extend(_duplicate_keys(rel, raw))
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
