"""Names the targets generate from the spec's names, held to PostgreSQL's 63 characters.

The identifier rule (identifiers.py) holds each name a spec writes to 63 characters, PostgreSQL's
limit, where a longer name is truncated and silently names another relation or column. The
targets then build longer names from them: an entity's relations (`<entity>__reject`), the
marker and rule columns of the staged relation (`_c__<field>`, `_r__<rule>`). An outside tester
(session 41) built a 62-character entity (dbt refused `<entity>__staged`) and a 55-character field
with two `range` rules, whose rule columns PostgreSQL cut to one name. Each such name is refused
at the name that produces it, with the length it may have.
"""

from __future__ import annotations

from ..errors import Diagnostic
from ..identifiers import MAX_IDENTIFIER
from .model import Entity, Project

# The relations every target builds for an entity beside the entity itself, by when it has them.
RELATION_SUFFIXES = (
    ("__staged", lambda e: True),
    ("__reject", lambda e: e.has_reject),
    ("__current", lambda e: e.scd == "type2"),
    ("__loads", lambda e: e.materialized == "incremental"),
)
MARKER_PREFIX, RULE_PREFIX = "_c__", "_r__"


def relation_names(entity: Entity) -> list[str]:
    """The entity's relations as the targets name them in its schema."""
    return [entity.name] + [entity.name + suffix for suffix, has in RELATION_SUFFIXES if has(entity)]


def _remedy(rule) -> str:
    """What shortens a rule's generated name: a referential rule is named after its relationship
    (it takes no `name:`; an outside tester, session 45, was told to shorten a field), an
    expression rule by its own `name:`, a field's rule after its field."""
    if rule.kind == "referential":
        return "shorten the relationship's name"
    if rule.kind == "expression":
        return "shorten the rule's `name:`"
    return "shorten the field's name, or name the rule yourself where its kind takes a `name:`"


def too_long(project: Project) -> list[Diagnostic]:
    """Every generated name over the limit, at the spec name that produces it."""
    out = []
    for e in project.entities:
        longest = max(relation_names(e), key=len)
        if len(longest) > MAX_IDENTIFIER:
            room = MAX_IDENTIFIER - (len(longest) - len(e.name))
            out.append(Diagnostic(e.loc.file or e.file, e.loc.line or 1,
                                  f"entity `{e.name}` names a relation `{longest}` of {len(longest)} characters, over the "
                                  f"{MAX_IDENTIFIER} PostgreSQL allows (it would cut the name and read another relation); "
                                  f"shorten the entity's name to at most {room} characters."))
        # the staged relation's columns named after a field (its coercion marker) or a rule
        named = [(MARKER_PREFIX, c.name, f"field `{c.name}`", "its coercion marker column", e.loc,
                  "shorten the field's name") for c in e.columns]
        named += [(RULE_PREFIX, r.name, f"rule `{r.name}`", "its column", r.loc if r.loc.line else e.loc, _remedy(r))
                  for r in e.rules]
        for prefix, name, subject, what, loc, remedy in named:
            if len(prefix + name) > MAX_IDENTIFIER:
                out.append(Diagnostic(loc.file or e.file, loc.line or 1,
                                      f"{subject} of entity `{e.name}` names {what} `{prefix}{name}`, over the "
                                      f"{MAX_IDENTIFIER} characters PostgreSQL allows (two such names cut to one would "
                                      f"be one column); keep the name to at most {MAX_IDENTIFIER - len(prefix)} "
                                      f"characters: {remedy}."))
    return out
