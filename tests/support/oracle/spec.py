"""The oracle's own small reading of the spec grammar (DESIGN.md sections 2 and 8, docs/spec.md).

`read_spec(path)` reads the YAML with `yaml.safe_load` and resolves, by the documents alone, what
the product's resolver also decides: which rules an entity has (implicit `coercible` included),
their generated names, their dispositions, which mapping owns a field rule, and the dedupe total
order. Nothing here is imported from `assay`, so a resolver bug shows up as a disagreement.

Readings the documents leave open, made here and pinned by tests/unit/test_oracle.py:
- "Declaration order" (for `_2`, `_3`): spec files in path order; the mappings of an entity in
  the order of their files; within a mapping the `key:` fields then `fields:`, each in document
  order; within a field the implicit `coercible` first, then (a type-2 key, decision 0416) the
  implicit `not_null`, then its rules as written; the entity's row rules (`referential`) after
  every mapping.
- An explicitly declared `coercible` on a field replaces the implicit one; a declared `not_null`
  on a type-2 key replaces its implicit one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import yaml

from .values import Unsupported, decimal_shape, normalize_type, typed_literal, yaml_text

INGESTION = ("_load_id", "_ingested_at", "_source_row_id")
SEVERITY = {"flag": 1, "quarantine": 2, "fail": 3}  # fail > quarantine > flag (001)
REFERENTIAL_DISPOSITION = {"unknown_member": "flag", "quarantine": "quarantine", "flag": "flag"}
DEFAULT_SCHEMAS = {"bronze": "bronze", "silver": "silver", "gold": "gold", "meta": "assay_meta"}
_CODEPOINTS = re.compile(r"U\+([0-9A-Fa-f]{4,6})(?:-U\+([0-9A-Fa-f]{4,6}))?")


def fold(name: str) -> str:
    """Generated names fold to [a-z0-9_]."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class FieldSource:
    column: str
    bronze_column: str
    path: tuple  # the dotted path after `$.`
    steps: tuple  # ((name, args tuple), ...)
    is_key: bool


@dataclass(frozen=True)
class Mapping:
    name: str
    source: str
    file: str
    fields: tuple  # FieldSource, key fields first, in document order


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    disposition: str  # flag | quarantine | fail
    column: Optional[str] = None
    mapping: Optional[str] = None  # the mapping a field rule judges; None for row rules
    params: dict = field(default_factory=dict, hash=False, compare=False)
    implicit: bool = False

    def param(self, key: str, default: Any = None) -> Any:
        return self.params.get(key, default)


@dataclass
class Entity:
    name: str
    key: tuple
    columns: tuple  # Column, in document order
    scd: str
    dedupe: tuple  # the total order: column names, most significant first (empty without dedupe:)
    quarantine: bool
    redact: tuple  # bronze column names removed from a reject row's raw
    opted_in: bool
    materialized: str
    mappings: tuple = ()
    rules: tuple = ()  # sorted by name
    redact_keys: tuple = ()  # key paths inside a JSON column (decision 0943): the ledger refuses them

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def rule(self, name: str) -> Rule:
        for r in self.rules:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def has_ingestion_metadata(self) -> bool:
        """dedupe: or quarantine: make the three ingestion columns mandatory (001, 0014)."""
        return bool(self.dedupe) or self.quarantine


@dataclass
class Spec:
    root: Path
    schemas: dict
    entities: tuple  # Entity, by name

    def entity(self, name: str) -> Entity:
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(name)

    def schema(self, kind: str) -> str:
        return self.schemas[kind]


def _steps(chain: list) -> tuple:
    out = []
    for item in chain or []:
        if isinstance(item, str):
            out.append((item, ()))
        elif isinstance(item, dict) and len(item) == 1:
            name, arg = next(iter(item.items()))
            out.append((name, tuple(arg) if isinstance(arg, list) else (arg,)))
        else:
            raise Unsupported(f"transform {item!r}")
    return tuple(out)


def _path(text: str) -> tuple:
    if not isinstance(text, str) or not text.startswith("$."):
        raise Unsupported(f"`from: {text!r}`")
    return tuple(text[2:].split("."))


def _read_settings(root: Path) -> tuple[Path, dict]:
    schemas = dict(DEFAULT_SCHEMAS)
    settings_file = root / "assay.yml"
    specs = root
    if settings_file.exists():
        settings = yaml.safe_load(settings_file.read_text(encoding="utf-8")) or {}
        schemas.update(settings.get("schemas") or {})
        specs = root / str(settings.get("specs", "."))
    return specs, schemas


def read_schemas(root) -> dict:
    return _read_settings(Path(root))[1]


def _documents(specs: Path) -> list[tuple[str, dict]]:
    files = sorted(
        (p for p in list(specs.rglob("*.yml")) + list(specs.rglob("*.yaml")) if p.name != "assay.yml"),
        key=lambda p: p.relative_to(specs).as_posix(),
    )
    out = []
    for p in files:
        rel = p.relative_to(specs).as_posix()
        if any(part.startswith(".") for part in p.relative_to(specs).parts[:-1]):
            continue
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
        if isinstance(doc, dict):
            out.append((rel, doc))
    return out


def read_spec(path) -> Spec:
    """Read the spec directory `path` (the one holding assay.yml, or the YAML documents)."""
    root = Path(path)
    specs, schemas = _read_settings(root)
    docs = _documents(specs)
    entity_docs = {}
    mapping_docs: dict[str, list] = {}
    for rel, doc in docs:
        if "spec_version" in doc:
            for name, ent in (doc.get("entities") or {}).items():
                entity_docs[name] = ent
        elif "mapping_version" in doc:
            mapping_docs.setdefault(doc["target"], []).append((rel, doc))
    entities = tuple(_entity(name, entity_docs[name], mapping_docs.get(name, [])) for name in sorted(entity_docs))
    return Spec(root, schemas, entities)


def _entity(name: str, ent: dict, mdocs: list) -> Entity:
    columns = tuple(Column(c, normalize_type((f or {}).get("type", "string"))) for c, f in (ent.get("fields") or {}).items())
    types = {c.name: c.type for c in columns}
    dedupe_doc = ent.get("dedupe")
    order: list = []
    if dedupe_doc:
        if not dedupe_doc.get("tie_break"):
            raise Unsupported(f"refused spec: dedupe of {name} without tie_break")
        # 001 / DESIGN 3: recency field, each tie_break, _source_row_id, _load_id, then the mapping
        # (two feeds may share a source row id and a load id: decision 1135); repeats add nothing
        for col in [dedupe_doc["field"], *dedupe_doc["tie_break"], "_source_row_id", "_load_id", "_mapping"]:
            if col not in order:
                order.append(col)
    order_columns = {c for c in order if c not in INGESTION and c != "_mapping"}
    quarantine_doc = ent.get("quarantine")
    redact_paths = [_path(p) for p in ((quarantine_doc or {}).get("redact") or [])]
    redact = tuple(p[0] for p in redact_paths if len(p) == 1)
    # a key inside a JSON column (decision 0943): the ledger does not model the rewritten
    # document (test_redact_json_keys judges it by hand), so it refuses to write such a raw
    redact_keys = tuple(p for p in redact_paths if len(p) > 1)

    mappings = []
    field_rule_docs = []  # (mapping, FieldSource, [rule docs])
    for rel, doc in sorted(mdocs, key=lambda fd: fd[0]):
        mname = doc.get("name") or doc["source"]
        fields = []
        for is_key, section in ((True, doc.get("key") or {}), (False, doc.get("fields") or {})):
            for col, fm in section.items():
                p = _path(fm["from"])
                src = FieldSource(col, p[0], p, _steps(fm.get("transform")), is_key)
                fields.append(src)
                field_rule_docs.append((mname, src, list(fm.get("quality") or [])))
        mappings.append(Mapping(mname, doc["source"], rel, tuple(fields)))

    opted_in = bool(ent.get("quality")) or quarantine_doc is not None or any(rules for _m, _s, rules in field_rule_docs)
    authored = {r["name"] for r in ent.get("quality") or [] if r.get("rule") == "expression"}
    used: set = set()
    rules: list[Rule] = []

    def add(base: str, **kw) -> None:
        rname, n = base, 1
        while rname in used:
            n += 1
            rname = f"{base}_{n}"
        used.add(rname)
        if rname in authored:
            raise Unsupported(f"refused spec: expression rule {rname} has the name of a generated rule")
        rules.append(Rule(rname, **kw))

    for mname, src, rdocs in field_rule_docs:
        col = src.column
        ctype = types.get(col, "string")
        explicit = [r for r in rdocs if r.get("rule") == "coercible"]
        # Every chain, nullif and regex_extract included: the NULL they make on purpose is no failed cast.
        if opted_in and not explicit:
            add(fold(f"{col}_coercible"), kind="coercible", disposition="fail" if col in order_columns else "quarantine",
                column=col, mapping=mname, implicit=True)
        # decision 0416: no history can version a row whose key is NULL, so a type-2 key column
        # has a `not_null` of its own unless one is declared: the entity's quarantine where it
        # states a retention, else `fail`; a declared one (or a `coercible`) that only flags is refused.
        if ent.get("scd") == "type2" and src.is_key:
            if any(r.get("rule") in ("not_null", "coercible") and r.get("on_fail") == "flag" for r in rdocs):
                raise Unsupported(f"refused spec: a flag on the key {col} of the type-2 entity {name}")
            if not any(r.get("rule") == "not_null" for r in rdocs):
                retained = bool((quarantine_doc or {}).get("retention"))
                add(fold(f"{col}_not_null"), kind="not_null", disposition="quarantine" if retained else "fail",
                    column=col, mapping=mname, implicit=True)
        for r in rdocs:
            kind, disp = r.get("rule"), r.get("on_fail")
            if disp not in SEVERITY:
                raise Unsupported(f"refused spec: rule {kind} on {col} has on_fail {disp!r}")
            if kind == "coercible" and col in order_columns and disp != "fail":
                raise Unsupported(f"refused spec: DedupeDispositionConflict on {col}")
            suffix, params = kind, {}
            if kind in ("range", "length"):
                lo, hi = r.get("min"), r.get("max")
                if lo is not None and hi is None:
                    suffix = f"{kind}_min"
                elif hi is not None and lo is None:
                    suffix = f"{kind}_max"
                params = {"min": lo, "max": hi}
            elif kind == "pattern":
                params = {"regex": r["regex"]}
            elif kind == "in_set":
                params = {"values": tuple(typed_literal(v, ctype) for v in r["values"])}
            elif kind == "in_enum":
                targets = [yaml_text(a) for step, args in src.steps if step == "enum_map" for a in args[1::2]]
                params = {"values": tuple(targets)}
            elif kind == "charset":
                mode = "allow" if r.get("allow") is not None else "forbid"
                ranges = []
                for item in r[mode]:
                    m = _CODEPOINTS.fullmatch(str(item))
                    if not m:
                        raise Unsupported(f"charset range {item!r}")
                    lo_cp = int(m.group(1), 16)
                    ranges.append((lo_cp, int(m.group(2), 16) if m.group(2) else lo_cp))
                params = {"mode": mode, "ranges": tuple(ranges)}
            elif kind not in ("coercible", "not_null", "unique", "normalize"):
                raise Unsupported(f"field rule kind {kind}")
            add(fold(f"{col}_{suffix}"), kind=kind, disposition=disp, column=col, mapping=mname, params=params)

    for r in ent.get("quality") or []:
        kind = r.get("rule")
        if kind == "expression":
            if r.get("on_fail") not in SEVERITY:
                raise Unsupported(f"refused spec: expression {r.get('name')} has on_fail {r.get('on_fail')!r}")
            rules.append(Rule(r["name"], "expression", r["on_fail"], params={"expr": r["expr"]}))
        elif kind == "referential":
            add(fold(f"{r['via']}_referential"), kind="referential", disposition=REFERENTIAL_DISPOSITION[r["on_missing"]],
                params={"via": r["via"], "on_missing": r["on_missing"]})
        else:
            raise Unsupported(f"row rule kind {kind}")

    for c in columns:
        if not (c.type in ("string", "int", "bool", "date", "timestamp", "variant") or decimal_shape(c.type)):
            raise Unsupported(f"column type {c.type}")
    return Entity(
        name=name,
        key=tuple(ent["key"]),
        columns=columns,
        scd=ent.get("scd", "type1"),
        dedupe=tuple(order),
        quarantine=quarantine_doc is not None,
        redact=redact,
        redact_keys=redact_keys,
        opted_in=opted_in,
        materialized=ent.get("materialized", "table"),
        mappings=tuple(mappings),
        rules=tuple(sorted(rules, key=lambda r: r.name)),
    )
