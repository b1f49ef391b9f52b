"""The spec grammar as strict pydantic models.

These models only check shape: types, required keys, closed vocabularies.
Everything that needs more than one value to decide (a column that does not
exist, a disposition that conflicts with dedupe) is a refusal of
`assay.validate`, which reports with the same file and line.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, StrictBool, StrictFloat, StrictInt

Disposition = Literal["flag", "quarantine", "fail"]
NAME_PATTERN = r"^[a-z][a-z0-9_]*$"
from ..duration import PATTERN as DURATION_PATTERN  # the one grammar of durations
from ..duration import ZERO_OR_MORE as LAG_PATTERN


class Strict(BaseModel):
    """Base for every grammar node: unknown keys are refused, the node remembers its lines."""

    model_config = ConfigDict(extra="forbid", frozen=False, populate_by_name=True)
    _line: int = PrivateAttr(default=0)
    _key_lines: dict = PrivateAttr(default_factory=dict)

    def line(self, key: Optional[str] = None) -> int:
        """The line of this node, or of one of its keys when given."""
        if key is not None and key in self._key_lines:
            return self._key_lines[key]
        return self._line


# --- field rules (on a mapping field) -------------------------------------------------


class _RateLimit(Strict):
    """A rule's own rate threshold (assay.checks.rates validates it, with its sentences)."""

    max_rate: Optional[Any] = None
    min_rows: Optional[Any] = None
    on_breach: Optional[Any] = None
    max_increase: Optional[Any] = None  # a change limit (assay.checks.increases)
    anomaly: Optional[Any] = None  # judged against the band learnt from earlier runs (assay.checks.anomaly)


class _FieldRule(_RateLimit):
    on_fail: Optional[str] = None  # required; refused with a sentence by validation


class CoercibleRule(_FieldRule):
    rule: Literal["coercible"]


class NotNullRule(_FieldRule):
    rule: Literal["not_null"]


# A bound is a number, a decimal string or a date; a YAML boolean is none of them (pydantic's lax
# mode read `min: true` as 1: an outside tester, session 36).
Bound = Union[StrictInt, StrictFloat, str]


class RangeRule(_FieldRule):
    rule: Literal["range"]
    min: Optional[Bound] = None
    max: Optional[Bound] = None


class LengthRule(_FieldRule):
    rule: Literal["length"]
    min: Optional[StrictInt] = Field(default=None, ge=0)
    max: Optional[StrictInt] = Field(default=None, ge=0)


class PatternRule(_FieldRule):
    rule: Literal["pattern"]
    regex: str


class InEnumRule(_FieldRule):
    rule: Literal["in_enum"]


class InSetRule(_FieldRule):
    rule: Literal["in_set"]
    values: list[Union[str, int, float, bool]] = Field(min_length=1)


class UniqueRule(_FieldRule):
    rule: Literal["unique"]


class NormalizeRule(_FieldRule):
    rule: Literal["normalize"]
    form: Literal["nfc"]


class CharsetRule(_FieldRule):
    rule: Literal["charset"]
    allow: Optional[list[str]] = None
    forbid: Optional[list[str]] = None


FieldRule = Annotated[
    Union[
        CoercibleRule,
        NotNullRule,
        RangeRule,
        LengthRule,
        PatternRule,
        InEnumRule,
        InSetRule,
        UniqueRule,
        NormalizeRule,
        CharsetRule,
    ],
    Field(discriminator="rule"),
]
FIELD_RULE_KINDS = (
    "coercible",
    "not_null",
    "range",
    "length",
    "pattern",
    "in_enum",
    "in_set",
    "unique",
    "normalize",
    "charset",
)

# --- row rules (on an entity) ---------------------------------------------------------


class ExpressionRule(_RateLimit):
    rule: Literal["expression"]
    name: str = Field(pattern=NAME_PATTERN)
    expr: str
    on_fail: Optional[str] = None


class ReferentialRule(_RateLimit):
    rule: Literal["referential"]
    via: str
    on_missing: Literal["unknown_member", "quarantine", "flag"]


RowRule = Annotated[Union[ExpressionRule, ReferentialRule], Field(discriminator="rule")]
ROW_RULE_KINDS = ("expression", "referential")

# --- entity model document ------------------------------------------------------------


class Assert(Strict):
    min: Optional[Bound] = None
    max: Optional[Bound] = None
    not_null: Optional[StrictBool] = None
    enum: Optional[list[Union[str, int, float, bool]]] = None
    regex: Optional[str] = None


class EntityField(Strict):
    type: str
    # Strict: pydantic would read the text "yes" or "no" or the number 1 as true; a YAML boolean
    # (`true`, or YAML 1.1's plain `yes`/`on`) is what is meant (decision 0977).
    required: StrictBool = False
    classification: Optional[Literal["public", "internal", "pii", "secret"]] = None
    assert_: Optional[Assert] = Field(default=None, alias="assert")
    description: Optional[str] = None


class Dedupe(Strict):
    keep: Literal["latest_by"]
    field: str
    tie_break: Optional[list[str]] = None


class Quarantine(Strict):
    retention: Optional[str] = Field(default=None, pattern=DURATION_PATTERN)
    redact: list[str] = Field(default_factory=list)


class Incremental(Strict):
    lag: str = Field(pattern=LAG_PATTERN)


class Grants(Strict):
    select: list[str] = Field(default_factory=list)


class Entity(Strict):
    grain: str = Field(min_length=1)
    key: list[str] = Field(min_length=1)
    scd: Literal["type1", "type2"] = "type1"
    owner: Optional[str] = None
    description: Optional[str] = None
    grants: Optional[Grants] = None
    fields: dict[str, EntityField] = Field(default_factory=dict)
    dedupe: Optional[Dedupe] = None
    quarantine: Optional[Quarantine] = None
    quality: list[RowRule] = Field(default_factory=list)
    # Declared checks are validated by assay.checks.declared, which owns their codes.
    checks: Optional[Any] = None
    # Rate thresholds of the entity, validated by assay.checks.rates.
    thresholds: Optional[Any] = None
    materialized: Literal["table", "incremental"] = "table"
    incremental: Optional[Incremental] = None


class Relationship(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    from_: str = Field(alias="from")
    to: str
    via: dict[str, str] = Field(min_length=1)
    cardinality: Literal["many_to_one", "one_to_one", "one_to_many"] = "many_to_one"


class Coverage(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    relationship: str
    min: int = Field(default=1, ge=1)
    on_fail: Optional[str] = None


class Reconcile(Strict):
    name: str = Field(pattern=NAME_PATTERN)
    left: str
    right: str
    tolerance: str
    on_fail: Optional[str] = None


class EntityDocument(Strict):
    spec_version: Literal[1]
    entities: dict[str, Entity] = Field(default_factory=dict)
    relationships: list[Relationship] = Field(default_factory=list)
    coverage: list[Coverage] = Field(default_factory=list)
    reconcile: list[Reconcile] = Field(default_factory=list)


# --- mapping document -----------------------------------------------------------------


class Freshness(Strict):
    warn_after: Optional[str] = Field(default=None, pattern=DURATION_PATTERN)
    error_after: Optional[str] = Field(default=None, pattern=DURATION_PATTERN)


class FieldMapping(Strict):
    from_: str = Field(alias="from")
    transform: list[Union[str, dict[str, Any]]] = Field(default_factory=list)
    quality: list[FieldRule] = Field(default_factory=list)


class MappingDocument(Strict):
    mapping_version: Literal[1]
    source: str
    target: str
    name: Optional[str] = Field(default=None, pattern=NAME_PATTERN)
    description: Optional[str] = None
    freshness: Optional[Freshness] = None
    key: dict[str, FieldMapping] = Field(min_length=1)
    fields: dict[str, FieldMapping] = Field(default_factory=dict)
    unmapped: list[str] = Field(default_factory=list)


# --- tables document (checks on tables assay does not build) ---------------------------


class DeclaredTable(Strict):
    grain: list[str] = Field(default_factory=list)
    columns: Optional[list[str]] = None
    description: Optional[str] = None
    checks: Optional[Any] = None


class TablesDocument(Strict):
    tables_version: Literal[1]
    tables: dict[str, DeclaredTable] = Field(default_factory=dict)


# --- assay.yml ------------------------------------------------------------------------


class Schemas(Strict):
    bronze: str = "bronze"
    silver: str = "silver"
    gold: str = "gold"
    meta: str = "assay_meta"


class CheckBudget(Strict):
    """One table's own budget (`checks.budgets.<table>`); an unstated one is the project's."""

    scan_budget_bytes: Optional[StrictInt] = Field(default=None, ge=1)
    time_budget_seconds: Optional[StrictInt] = Field(default=None, ge=1)


class ChecksSettings(Strict):
    dir: str = "checks"
    on_failure: Literal["block", "warn"] = "block"
    # The budget of the pass over a table's rows (000, "When a check is never evaluated"):
    # over it, row-reading declared checks are recorded not_evaluated (decision 0530).
    scan_budget_bytes: StrictInt = Field(default=64 * 1024**3, ge=1)
    time_budget_seconds: StrictInt = Field(default=900, ge=1)
    budgets: dict[str, CheckBudget] = Field(default_factory=dict)


class DbtSettings(Strict):
    """What the dbt target writes beside the models."""

    # Whose clock dates the project's snapshots (decision 0996): `utc`, assay's override of dbt's
    # snapshot_get_time on DuckDB and PostgreSQL (decision 0992); `project`, the project's own
    # macros (dbt refuses a project that defines `duckdb__snapshot_get_time` twice).
    snapshot_clock: Literal["utc", "project"] = "utc"


class ProjectSettings(Strict):
    """`assay.yml` at the project root."""

    name: str = Field(default="assay_project", pattern=NAME_PATTERN)
    specs: str = "."
    schemas: Schemas = Field(default_factory=Schemas)
    checks: ChecksSettings = Field(default_factory=ChecksSettings)
    dbt: DbtSettings = Field(default_factory=DbtSettings)


DOCUMENT_KINDS = {
    "spec_version": EntityDocument,
    "mapping_version": MappingDocument,
    "tables_version": TablesDocument,
}
# Version keys of documents that belong to the wider spec format but carry no quality
# semantics; assay lists them once as skipped instead of failing.
SKIPPED_KINDS = (
    "metric_version",
    "metrics_version",
    "mart_version",
    "marts_version",
    "catalog_version",
    "steps_version",
    "step_version",
    "rollup_version",
    "semantic_version",
)
