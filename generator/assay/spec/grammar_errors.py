"""Grammar errors as diagnostics: pydantic's errors about a spec document, each placed at its
file and line with a sentence saying what to write instead.

Where an error's most likely cause is not the value pydantic names, the sentence says the cause: a
misspelt rule kind (judged as the kind it suggests, so the rest of the rule is judged too), a
field mapping's key written at a field's indentation, an entity key that names no field, a lone
text where a mapping is expected. `spec/repair.py` reads the same guesses to judge the rest of a
broken document (decision 0028).
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Optional

from pydantic import BaseModel, ValidationError

from ..errors import Diagnostic
from .yamlload import LineDict, LineList, locate


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
    if "hdw" in pattern and isinstance(value, str) and re.fullmatch(r"0+[hdw]", value.strip()):
        return (f"{path} is {_show(value)}: zero is no {path.rsplit('.', 1)[-1]}; write at least one hour, day or week "
                "such as `1h`, `1d`, `1w`, or leave it out.")
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


# A value quoted back longer than this is cut: a 100,000-character value made a 100,126-character
# message line (an outside tester, session 41); the file and line say where the rest is.
SHOWN_CHARACTERS = 80


def _show(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, (list, dict)):
        return "a list" if isinstance(value, list) else "a mapping"
    text = str(value)
    if len(text) > SHOWN_CHARACTERS:
        return f"`{text[:SHOWN_CHARACTERS]}...` ({len(text):,} characters)"
    return f"`{text}`"


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
