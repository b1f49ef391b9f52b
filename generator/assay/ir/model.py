"""The IR: resolved entities, mappings, rules and checks.

Every object is frozen and every collection a sorted tuple, so that two
resolutions of one spec compare equal and emit byte-identical projects.
Nothing here knows a SQL dialect.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from ..duration import Duration
from ..spec.transforms import Step

SEVERITY = {"flag": 1, "quarantine": 2, "fail": 3}
INGESTION_COLUMNS = ("_load_id", "_ingested_at", "_source_row_id")
#: The assay type of the columns every entity table has beside its fields (lower/staged.LINEAGE,
#: in its order: tests/unit/test_kept_values.py holds the two lists equal); an expression rule
#: reads them as these types too.
LINEAGE_TYPES = (("_mapping", "string"), ("_source_row_id", "string"), ("_load_id", "string"),
                 ("_ingested_at", "timestamp"))
#: What ends every dedupe order, in this order, so the winner is a function of the data: the source
#: row, its delivery, and its mapping (two mappings may share a `_source_row_id` and a `_load_id`;
#: decisions 0014 and 1135).
DEDUPE_TAIL = ("_source_row_id", "_load_id", "_mapping")
# The alias a reject row's `raw` payload reads the whole bronze row by (`to_json(bronze_row)`). A
# column of that name, in the staged model or in bronze, would be read instead of the row, so
# validation reserves it as a field name and as a bronze column a mapping names.
BRONZE_ROW_ALIAS = "bronze_row"
# The prefix of the columns a mapping's select computes a chain's steps in, beside bronze's own
# (`lower.fields.Steps`, decision 1163): a bronze column of that name would collide with one.
STEP_COLUMN_PREFIX = "_assay_step_"


@dataclass(frozen=True, order=True)
class Loc:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    required: bool = False
    classification: Optional[str] = None
    description: Optional[str] = None
    asserts: tuple = ()  # ((key, value), ...) alerts only, never route rows


@dataclass(frozen=True)
class FieldSource:
    """How one mapping produces one entity column from bronze."""

    column: str
    path: tuple[str, ...]  # ("Price",) reads a column; ("payload", "a") reads inside JSON
    steps: tuple[Step, ...]
    target_type: str
    is_key: bool
    loc: Loc

    @property
    def bronze_column(self) -> str:
        return self.path[0]

    @property
    def enum_values(self) -> tuple[str, ...]:
        for s in self.steps:
            if s.name == "enum_map":
                return tuple(sorted({str(v) for v in s.args[1::2]}))
        return ()


@dataclass(frozen=True)
class Mapping:
    name: str
    source: str  # bronze relation name
    file: str
    fields: tuple[FieldSource, ...]  # key fields first, then fields, in document order
    unmapped: tuple[str, ...]
    freshness_warn: Optional[Duration]
    freshness_error: Optional[Duration]
    loc: Loc

    @property
    def bronze_columns(self) -> tuple[str, ...]:
        """Every bronze column the mapping names (read or acknowledged), sorted."""
        cols = {f.bronze_column for f in self.fields} | {u for u in self.unmapped}
        return tuple(sorted(cols))

    def source_for(self, column: str) -> Optional[FieldSource]:
        for f in self.fields:
            if f.column == column:
                return f
        return None


@dataclass(frozen=True)
class Rule:
    """One quality rule with its effective disposition and generated name."""

    name: str
    kind: str
    disposition: str  # flag | quarantine | fail
    column: Optional[str]
    mapping: Optional[str]  # field rules judge the rows of their mapping only
    params: tuple = ()  # ((key, value), ...) sorted by key
    implicit: bool = False
    loc: Loc = Loc("", 0)

    def param(self, key: str, default: Any = None) -> Any:
        for k, v in self.params:
            if k == key:
                return v
        return default

    @property
    def severity(self) -> int:
        return SEVERITY[self.disposition]


@dataclass(frozen=True)
class Relationship:
    name: str
    from_entity: str
    to_entity: str
    columns: tuple[tuple[str, str], ...]  # (from column, to column)
    cardinality: str
    loc: Loc


@dataclass(frozen=True)
class DedupeKey:
    """One sort key of the dedupe order: always DESC NULLS LAST."""

    column: str
    metadata: bool  # an ingestion metadata column rather than an entity column


@dataclass(frozen=True)
class Coverage:
    name: str
    relationship: str
    parent: str
    child: str
    columns: tuple[tuple[str, str], ...]  # (child column, parent column)
    min: int
    on_fail: str
    loc: Loc


@dataclass(frozen=True)
class ReconcileSide:
    entity: str
    column: str
    agg: Optional[str]  # avg | count | max | min | sum, or None for a keyed column
    by: tuple[str, ...]  # group columns; the entity key for a keyed column


@dataclass(frozen=True)
class Reconcile:
    name: str
    left: ReconcileSide
    right: ReconcileSide
    tolerance: str
    on_fail: str
    loc: Loc


@dataclass(frozen=True)
class TableDecl:
    """A table assay does not build but declares checks on (`tables_version: 1`)."""

    name: str  # schema.table
    grain: tuple[str, ...]
    columns: Optional[tuple[str, ...]]
    declared_checks: tuple = ()
    loc: Loc = Loc("", 0)


@dataclass(frozen=True)
class Entity:
    name: str
    grain: str
    key: tuple[str, ...]
    scd: str
    owner: Optional[str]
    description: Optional[str]
    grants_select: tuple[str, ...]
    columns: tuple[Column, ...]  # in declaration order
    mappings: tuple[Mapping, ...]  # sorted by name
    rules: tuple[Rule, ...]  # sorted by name
    dedupe: tuple[DedupeKey, ...]  # empty when the entity does not dedupe
    opted_in: bool  # joined the quality system (quality:, quarantine:, or a field rule)
    retention: Optional[Duration]
    redact: tuple[str, ...]
    materialized: str
    incremental_lag: Optional[Duration] = None  # arrival lag of an incremental entity (`2h`); None reads as zero
    declared_checks: tuple = ()
    sql_checks: tuple = ()
    file: str = ""
    loc: Loc = Loc("", 0)

    @property
    def has_reject(self) -> bool:
        return self.opted_in

    @property
    def has_ingestion_metadata(self) -> bool:
        return bool(self.dedupe) or self.retention is not None or self.opted_in

    def column(self, name: str) -> Optional[Column]:
        for c in self.columns:
            if c.name == name:
                return c
        return None

    def rules_of_kind(self, kind: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.kind == kind)


@dataclass(frozen=True)
class Project:
    name: str
    schemas: tuple[tuple[str, str], ...]  # (role, schema name): bronze, gold, meta, silver
    entities: tuple[Entity, ...]  # sorted by name
    relationships: tuple[Relationship, ...]
    coverage: tuple[Coverage, ...]
    reconcile: tuple[Reconcile, ...]
    tables: tuple[TableDecl, ...]
    sql_checks: tuple = ()  # SQL check files of tables assay does not build
    spec_files: tuple[str, ...] = ()
    fingerprint: str = ""
    skipped: tuple[tuple[str, str], ...] = field(default=())
    # assay.yml `checks.scan_budget_bytes` / `checks.time_budget_seconds` (000's defaults), and
    # `checks.budgets`: (table, scan bytes, time seconds) of the tables with their own (decision 0530).
    check_budget: tuple[int, int] = (64 * 1024**3, 900)
    check_budgets: tuple[tuple[str, int, int], ...] = ()
    # `dbt.snapshot_clock` of assay.yml: `utc` (assay dates the snapshots, decision 0992) or
    # `project` (the dbt project's own snapshot_get_time, decision 0996).
    snapshot_clock: str = "utc"

    def budget_of(self, table: str) -> tuple[int, int]:
        """(scan bytes, time seconds) of one table's row pass."""
        for name, scan, seconds in self.check_budgets:
            if name == table:
                return scan, seconds
        return self.check_budget

    def schema(self, role: str) -> str:
        return dict(self.schemas)[role]

    def entity(self, name: str) -> Entity:
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(name)

    def relationship(self, name: str) -> Relationship:
        for r in self.relationships:
            if r.name == name:
                return r
        raise KeyError(name)


def dump(obj: Any) -> Any:
    """A plain, JSON-ready view of any IR object (used for golden files and `--json`)."""
    if hasattr(obj, "__dataclass_fields__"):
        return {k: dump(v) for k, v in asdict(obj).items()}
    if isinstance(obj, dict):
        return {str(k): dump(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [dump(v) for v in obj]
    return obj
