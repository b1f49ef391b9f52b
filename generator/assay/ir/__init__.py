"""The resolved, frozen model every target emits from."""

from .model import (  # noqa: F401
    Column,
    DedupeKey,
    Entity,
    FieldSource,
    Loc,
    Mapping,
    Project,
    Reconcile,
    Coverage,
    Relationship,
    Rule,
    TableDecl,
)
