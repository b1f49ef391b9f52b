"""Repairing a spec document that does not parse, for the semantic checks only (decision 0028).

A document with a grammar problem is reported as it is (SPEC_GRAMMAR); the checks that follow read
a repaired copy, so that one broken key, rule or duration does not hide every other problem of its
entity or mapping. The copy only repairs what no later check would echo as a problem of its own.
"""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import ValidationError

from .grammar_errors import _fields_of, guessed_kind
from .loader import LoadedSpec
from .models import EntityDocument, MappingDocument, TablesDocument
from .standins import merged, one_key_maps, repair_value
from .yamlload import LineDict, LineList, locate


def salvage(loaded: LoadedSpec, model, raw: LineDict):
    """(The document, the positioned YAML it was read from) for a document that does not parse:
    a mapping repaired as `_repaired` does, or an entities document with its well-formed entities,
    each repaired; None when nothing can be kept.

    Without this, one typo in one entity would hide every other problem of the
    project behind "not a declared entity" echoes. The lines of the document are those of the
    repaired copy, whose lists no longer hold the items left out.
    """
    if model in (MappingDocument, TablesDocument):
        # a tables document too: one table's broken grain hid every other table's problems
        body = _repaired(model, raw)
        return None if body is None else (model.model_validate(body), body)
    if model is not EntityDocument:
        return None
    entities = raw.get("entities")
    if entities is None:
        # `entites:` (refused as an unknown key, with its suggestion) is judged as the `entities:`
        # it suggests, as a misspelt rule kind is; otherwise every mapping into its entities
        # echoed "not a declared entity" (an outside tester, session 41)
        near = difflib.get_close_matches("entities", [str(k) for k in raw], n=1, cutoff=0.8)
        entities = raw.get(near[0]) if near else None
        if near:
            renamed = LineDict({("entities" if k == near[0] else k): v for k, v in raw.items()})
            renamed.line = raw.line
            renamed.key_lines = {("entities" if k == near[0] else k): v for k, v in raw.key_lines.items()}
            raw = renamed
    if one_key_maps(entities):  # `- orders: {...}`: reported as a list, judged as the mapping meant
        entities = merged(entities)
    for item in raw.get("relationships") if isinstance(raw.get("relationships"), list) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            loaded.known_relationships.add(item["name"])  # one left out is not "undeclared"
    if isinstance(entities, dict):
        for name in entities:
            loaded.known_entities.add(str(name))
    from .models import Entity

    trimmed = LineDict(raw)
    trimmed.line, trimmed.key_lines = raw.line, dict(raw.key_lines)
    trimmed["spec_version"] = 1  # `spec_version: "1"` is said; the document is still judged
    good = LineDict()
    good.line = getattr(entities, "line", raw.line)
    good.key_lines = dict(getattr(entities, "key_lines", {}))
    if isinstance(entities, dict):
        for name, body in entities.items():
            body = _repaired(Entity, body)
            if body is not None:
                good[name] = body
    trimmed["entities"] = good
    for key in ("relationships", "coverage", "reconcile"):
        if key not in raw:
            continue
        kept = _repaired(model, LineDict({"spec_version": 1, key: raw[key]}))
        if kept is None:
            trimmed[key] = LineList()
            trimmed[key].line, trimmed[key].item_lines = raw.line, []
        else:
            trimmed[key] = kept[key]
    try:
        return model.model_validate(trimmed), trimmed
    except ValidationError:
        return None


# Lists whose broken items can be left out without a later check echoing them as a problem of
# their own: each item stands alone (a rule, a check, a transform step, a relationship).
_PRUNABLE = frozenset({"quality", "checks", "transform", "relationships", "coverage", "reconcile"})


def _repaired(model, body: Any) -> Any:
    """`body` when it validates; else a copy of it that does, so that the entity's or mapping's
    other problems are found too (issues 19 and 26: one broken key or rule hid every other error
    of its document), or None. Its problems are already reported (SPEC_GRAMMAR); the copy only
    repairs what no later check reads: an unknown key is renamed to the key it is a typo of (the
    "did you mean" of its message) or left out; a value that does not parse, or a required one that
    is missing, is replaced by its neutral stand-in (`spec/standins.py`); a broken value without
    one is left out with the smallest part that holds it: an item of a list of values, or an item
    of a list of rules, checks, transform steps or relationships. Anything else drops the entity or
    mapping, whose names would otherwise echo as errors elsewhere (decision 0028)."""
    import copy

    try:
        model.model_validate(body)
        return body
    except ValidationError as exc:
        errors = exc.errors()
    if not isinstance(body, dict):
        return None
    trimmed = copy.deepcopy(body)
    for _round in range(200):
        repaired = False
        for e in errors:
            loc = tuple(e.get("loc") or ())
            if e.get("type") == "extra_forbidden" and loc:
                parent, last, _ = locate(trimmed, loc, tolerant=True)
                if not isinstance(parent, dict) or last not in parent:
                    return None
                guess = difflib.get_close_matches(str(last), _fields_of(model, loc[:-1]), n=1)
                value = parent.pop(last)
                if guess and guess[0] not in parent:
                    parent[guess[0]] = value
                    if hasattr(parent, "key_lines"):
                        parent.key_lines[guess[0]] = parent.key_lines.get(last, getattr(parent, "line", 1))
                repaired = True
            elif guessed_kind(e) is not None and _retag(trimmed, loc, guessed_kind(e)):
                repaired = True  # `nott_null` judged as the `not_null` it suggests: its `on_fail` too
            elif repair_value(model, trimmed, loc, e):
                repaired = True
            elif _drop_list_item(trimmed, loc):
                repaired = True
            if repaired:
                break  # positions shift: validate again before the next repair
        if not repaired:
            return None
        try:
            model.model_validate(trimmed)
            return trimmed
        except ValidationError as exc:
            errors = exc.errors()
    return None


def _retag(body: Any, loc: tuple, kind: str) -> bool:
    """Write `rule: kind` into the rule item at `loc`; False when there is none to write it into."""
    parent, last, _ = locate(body, loc, tolerant=False)
    if not isinstance(parent, (dict, list)) or last is None or not isinstance(parent[last], dict):
        return False
    if parent[last].get("rule") == kind:
        return False
    parent[last]["rule"] = kind
    return True


def _drop_list_item(body: Any, loc: tuple) -> bool:
    """Leave out the item of a prunable list (`_PRUNABLE`) that `loc` points into; False when the
    error is not inside one."""
    node, target, key = body, None, None
    for part in loc:
        if isinstance(node, dict) and part in node:
            key, node = part, node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            if key in _PRUNABLE:
                target = (node, part)
            key, node = None, node[part]
    if target is None:
        return False
    items, index = target
    del items[index]
    lines = getattr(items, "item_lines", None)
    if isinstance(lines, list) and index < len(lines):
        del lines[index]
    return True
