"""Neutral stand-ins for values that do not parse, for the semantic checks only (decision 0028).

A grammar problem is reported where it is (SPEC_GRAMMAR, by the loader). So that the rest of its
entity or mapping is still judged, `spec/repair.py` validates a copy in which the broken value is
replaced by a stand-in from this table: a value that parses and that no later check reads as a
problem of its own (the default where there is one, else the choice that asks least of the rest
of the spec). Where no such value exists, the smallest part is left out instead (one item of a
list of values, one rule, one check), and failing that the entity or mapping (repair.py).
"""

from __future__ import annotations

import re
import typing
from typing import Any, Optional

from pydantic import BaseModel

from .yamlload import LineDict, LineList

DROP = object()  # the key is left out: its default (None, or an empty list) is the neutral value
# An entity key with no name that reads (`key: 7`, `key: []`): a name no field can have, which the
# checks that compare with the key skip (`key_unread`), so the rest of the entity is still judged.
UNREAD_KEY = "<key not read>"
# A field type that does not read (`type: 5`, `type: [int]`, missing): no type at all, which the
# entity's check does not refuse again (the grammar problem is said) and which every check of a
# type reads as unknown, as it reads a misspelt one; left out, the field dropped its whole entity.
UNREAD_TYPE = "<type not read>"
OWN_COLUMN = object()  # `$.<the mapped column's own name>`: a path that parses and that no check reads
_DEDUPE = {"keep": "latest_by", "field": "_ingested_at", "tie_break": ["_load_id"]}  # ingestion columns: no check reads them
_FIELD_RULES = ("CoercibleRule", "NotNullRule", "RangeRule", "LengthRule", "PatternRule", "InEnumRule",
                "InSetRule", "UniqueRule", "NormalizeRule", "CharsetRule", "ExpressionRule")

# (grammar node, key) -> the stand-in of a value there that does not parse, or is missing.
STANDINS: dict[tuple[str, str], Any] = {
    # an entity field: `required: false` asks nothing of a mapping; the others are descriptive
    ("EntityField", "required"): False,
    ("EntityField", "type"): UNREAD_TYPE,
    ("EntityField", "classification"): DROP,
    ("EntityField", "description"): DROP,
    ("EntityField", "assert"): DROP,
    **{("Assert", key): DROP for key in ("min", "max", "not_null", "enum", "regex")},
    # an entity
    ("Entity", "grain"): "(missing)",  # prose no check reads
    ("Entity", "key"): [UNREAD_KEY],
    ("Entity", "scd"): "type1",  # the default; type2 adds reserved names and refusals
    ("Entity", "materialized"): "table",  # the default; its `incremental:` block is left out with it
    ("Entity", "owner"): DROP,
    ("Entity", "description"): DROP,
    ("Entity", "grants"): DROP,
    # A block written as something else (`quarantine: 90d`, `dedupe: updated_at`) still says the
    # entity has one: left out, its rules would read as quarantining without a retention.
    ("Entity", "quarantine"): {"retention": "1d"},
    ("Entity", "dedupe"): _DEDUPE,
    ("Entity", "incremental"): {"lag": "1h"},
    ("Grants", "select"): [],
    ("Dedupe", "keep"): "latest_by",  # the one value there is
    ("Dedupe", "field"): "_ingested_at",
    ("Dedupe", "tie_break"): ["_load_id"],  # left out, it would read as a dedupe without tie-break
    ("Quarantine", "retention"): "1d",
    ("Quarantine", "redact"): [],
    # durations: a warning threshold as short, an error threshold as long as can be compared
    ("Incremental", "lag"): "1h",
    ("Freshness", "warn_after"): "1h",
    ("Freshness", "error_after"): "9999w",
    # rules and checks: the disposition that asks for nothing else (no retention, no gate)
    **{(rule, "on_fail"): "flag" for rule in _FIELD_RULES + ("Coverage", "Reconcile")},
    ("ReferentialRule", "on_missing"): "flag",
    ("NormalizeRule", "form"): "nfc",  # the one value there is
    # a relationship: the one cardinality that asks nothing of the parent's key; left out, every
    # rule and coverage check naming it would read as naming an undeclared relationship
    ("Relationship", "cardinality"): "one_to_many",
    ("Coverage", "min"): 1,
    # a mapping
    ("MappingDocument", "mapping_version"): 1,  # `"1"` or `1.0`: said, and the document still judged
    ("MappingDocument", "name"): DROP,
    ("MappingDocument", "description"): DROP,
    ("MappingDocument", "freshness"): DROP,
    # a field's path (missing, or not text): the bronze column of the field's own name. Left out,
    # the field would be unmapped and its entity's key or `required:` would echo it (session 29)
    ("FieldMapping", "from"): OWN_COLUMN,
    # a mapping's key: one entry no entity key has (`key_unread`), so the rest of the mapping is
    # judged; left out, the whole mapping went and its other problems with it (session 41)
    ("MappingDocument", "key"): {UNREAD_KEY: {"from": "$._source_row_id"}},
    # the ingestion metadata every quarantine and dedupe needs: left out, that would be the echo
    ("MappingDocument", "unmapped"): ["$._load_id", "$._ingested_at", "$._source_row_id"],
}

# The nodes whose required `name:` is a stand-in of its own when it does not read (`folded_name`).
NAMED = frozenset({"Relationship", "Coverage", "Reconcile", "ExpressionRule"})


def folded_name(value: Any, line: int) -> str:
    """The name a broken `name:` is judged under: its text folded to the name grammar (`Order
    Customer` -> `order_customer`, so what refers to it by the folded name still finds it), or,
    for no text at all, one named after its line."""
    text = re.sub(r"[^a-z0-9_]+", "_", str(value).lower()).strip("_") if isinstance(value, (str, int)) \
        and not isinstance(value, bool) else ""
    if not text:
        return f"unnamed_line_{line or 0}"
    return text if text[0].isalpha() else f"n_{text}"


# Lists of values that stand alone: an item that does not parse is left out, the others are judged.
ITEM_LISTS = frozenset({
    ("InSetRule", "values"), ("Assert", "enum"), ("CharsetRule", "allow"), ("CharsetRule", "forbid"),
    ("Entity", "key"), ("Quarantine", "redact"), ("Grants", "select"), ("MappingDocument", "unmapped"),
    ("DeclaredTable", "grain"), ("DeclaredTable", "columns"),
})

# A node written as one text where a mapping is expected: the key that text is the value of
# (`status: string` is `status: {type: string}`, `amount: "$.amount"` is `amount: {from: ...}`).
SHORTHANDS = {"EntityField": "type", "FieldMapping": "from"}


def repair_value(model: type[BaseModel], body: Any, loc: tuple, err: dict) -> bool:
    """Replace the value `err` (a pydantic error at `loc`) is about by its stand-in, in `body`;
    False when this module knows none (repair.py then leaves out a larger part)."""
    kind = err.get("type", "")
    cut = real_length(body, loc, kind == "missing")
    if cut == 0:
        return False
    parent = _node(body, loc[: cut - 1])
    key = loc[cut - 1]
    owner = _name(model_at(model, loc[: cut - 1]))
    if isinstance(key, int) and isinstance(parent, list):
        list_key = _list_key(model, body, loc[: cut - 1])
        if list_key in ITEM_LISTS:
            del parent[key]
            if isinstance(getattr(parent, "item_lines", None), list) and key < len(parent.item_lines):
                del parent.item_lines[key]
            return True
        if isinstance(STANDINS.get(list_key), list):
            return _put(_node(body, loc[: cut - 2]), loc[cut - 2], STANDINS[list_key])
    if not isinstance(parent, dict):
        return False
    value = parent.get(key)
    here = _name(model_at(model, loc[:cut]))
    standin = STANDINS.get((owner, key))
    if key == "name" and owner in NAMED and standin is None:
        # A name that does not read still names its check, rule or relationship: left out, the
        # whole item went with it, hiding its other problems, and a rule naming a relationship
        # `Order Customer` was told the relationship is not declared (an outside tester, session 41).
        return _put(parent, key, folded_name(value, parent.line_of(key) if isinstance(parent, LineDict) and key in parent
                                             else getattr(parent, "line", 0)))
    if here in SHORTHANDS and isinstance(value, str) and kind in ("model_type", "model_attributes_type"):
        return _put(parent, key, {SHORTHANDS[here]: value})
    if kind == "string_type" and key in parent and standin is None:
        # a number where text is asked for (`tolerance: 0.01`, `source: 5`) is judged as the text it
        # reads as, and a one-item list (`target: [order]`) as its item: the grammar problem is
        # said, and what the text then means is judged as if quoted (an outside tester, session 41)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _put(parent, key, str(value))
        if isinstance(value, list) and len(value) == 1 and isinstance(value[0], (str, int, float)) \
                and not isinstance(value[0], bool):
            return _put(parent, key, str(value[0]))
    if here == "EntityField" and kind in ("model_type", "model_attributes_type") and not isinstance(value, (dict, str)):
        return _put(parent, key, {"type": UNREAD_TYPE})  # `amount: [1]`: a field, its type unread
    if kind == "list_type" and key in parent and (standin is None or value is None or isinstance(value, str)):
        return _wrap(parent, key)
    if kind == "dict_type" and one_key_maps(value):
        return _put(parent, key, merged(value))
    if standin is None:
        return False
    if standin is DROP:
        if key not in parent:
            return False
        parent.pop(key)
        return True
    if standin is OWN_COLUMN:
        column = loc[cut - 2] if cut >= 2 else None
        if not isinstance(column, str) or not re.match(r"^[A-Za-z_][A-Za-z0-9_]*\Z", column):
            return False
        standin = f"$.{column}"
    if (owner, key) == ("Entity", "materialized"):
        parent.pop("incremental", None)  # judged as `table`, a block of `incremental` would be an echo
    return _put(parent, key, standin)


def real_length(body: Any, loc: tuple, missing: bool) -> int:
    """How many parts of pydantic's `loc` name something written in `body` (union tags in the
    middle are skipped, the names of union members after the value are not counted), plus the
    missing key of a `missing` error; 0 when the walk cannot start."""
    node, cut = body, 0
    for i, part in enumerate(loc):
        if isinstance(node, dict) and isinstance(part, str) and part in node:
            node, cut = node[part], i + 1
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node, cut = node[part], i + 1
        elif isinstance(node, dict) and isinstance(part, str) and i == len(loc) - 1 and missing:
            return i + 1
        elif isinstance(node, dict) and isinstance(part, str) and i < len(loc) - 1:
            continue  # a union tag
        else:
            break
    return cut


def model_at(model: Any, loc: tuple) -> Any:
    """The grammar annotation of the node at `loc` (through dict values, list items and union
    tags), or None."""
    ann = model
    for part in loc:
        ann = _child(ann, part)
        if ann is None:
            return None
    return _strip(ann)


def _child(ann: Any, part: Any) -> Any:
    ann = _strip(ann)
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        for name, info in ann.model_fields.items():
            if (info.alias or name) == part:
                return info.annotation
        return None
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is list and isinstance(part, int):
        return args[0]
    if origin is dict and isinstance(part, str):
        return args[1]
    if origin is typing.Union:
        for member in args:
            member = _strip(member)
            if isinstance(member, type) and issubclass(member, BaseModel) and "rule" in member.model_fields:
                if part in typing.get_args(member.model_fields["rule"].annotation):
                    return member
    return None


def _strip(ann: Any) -> Any:
    """`ann` without `Annotated[...]` and `Optional[...]`."""
    while True:
        if typing.get_origin(ann) is typing.Annotated:
            ann = typing.get_args(ann)[0]
            continue
        if typing.get_origin(ann) is typing.Union:
            members = [a for a in typing.get_args(ann) if a is not type(None)]
            if len(members) == 1:
                ann = members[0]
                continue
        return ann


def _name(ann: Any) -> Optional[str]:
    return ann.__name__ if isinstance(ann, type) and issubclass(ann, BaseModel) else None


def _list_key(model: Any, body: Any, loc: tuple) -> tuple:
    """(grammar node, key) of the list at `loc`, skipping a union tag before the key."""
    cut = real_length(body, loc, False)
    if cut == 0 or not isinstance(loc[cut - 1], str):
        return (None, None)
    return (_name(model_at(model, loc[: cut - 1])), loc[cut - 1])


def _node(body: Any, loc: tuple) -> Any:
    node = body
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
    return node


def one_key_maps(value: Any) -> bool:
    """A list of one-key mappings (`- orders: {...}`) where a mapping of names is expected."""
    if not isinstance(value, list) or not value:
        return False
    names = [next(iter(item)) for item in value if isinstance(item, dict) and len(item) == 1]
    return len(names) == len(value) and len(set(names)) == len(names)


def merged(items: list) -> LineDict:
    out = LineDict()
    out.line = getattr(items, "line", 0)
    for item in items:
        [(name, value)] = item.items()
        out[name] = value
        out.key_lines[name] = item.line_of(name) if isinstance(item, LineDict) else out.line
    return out


def _put(parent: Any, key: Any, standin: Any) -> bool:
    """Set `parent[key]` to a positioned copy of `standin` (on the key's line); False when it is
    there already (nothing left to repair)."""
    line = parent.line_of(key) if isinstance(parent, LineDict) and key in parent else getattr(parent, "line", 1)
    if isinstance(parent, LineDict) and key not in parent:
        parent.key_lines[key] = line
    if isinstance(standin, LineDict):
        value = standin
    else:
        value = _positioned(standin, line)
    if key in parent and parent[key] == value and type(parent[key]) is type(value):
        return False
    parent[key] = value
    return True


def _wrap(parent: LineDict, key: str) -> bool:
    """`key: x` where a list is expected read as `key: [x]` (`key: order_id`, `transform: trim`, one
    rule written without its list), and `key:` with nothing after it as `key: []`."""
    value, line = parent[key], parent.line_of(key) if isinstance(parent, LineDict) else 1
    items = LineList([] if value is None else [value])
    items.line = line
    items.item_lines = [] if value is None else [getattr(value, "line", 0) or line]
    parent[key] = items
    return True


def _positioned(value: Any, line: int) -> Any:
    if isinstance(value, dict):
        out = LineDict()
        out.line = line
        for k, v in value.items():
            out[k] = _positioned(v, line)
            out.key_lines[k] = line
        return out
    if isinstance(value, list):
        items = LineList(_positioned(v, line) for v in value)
        items.line = line
        items.item_lines = [getattr(v, "line", line) if isinstance(v, (LineDict, LineList)) else line for v in value]
        return items
    return value


def key_unread(key) -> bool:
    """Whether an entity's key is the stand-in of one that did not parse (already reported)."""
    return UNREAD_KEY in (key or ())
