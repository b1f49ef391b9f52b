"""The index every validator reads: entities and mappings by name, with their files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..errors import Diagnostic
from ..spec.loader import LoadedSpec
from ..spec.models import Entity, EntityDocument, MappingDocument, Relationship


@dataclass
class Context:
    loaded: LoadedSpec
    entities: dict[str, tuple[str, Entity]] = field(default_factory=dict)  # name -> (file, entity)
    relationships: dict[str, tuple[str, Relationship]] = field(default_factory=dict)
    mappings: list[tuple[str, MappingDocument]] = field(default_factory=list)
    docs: list[tuple[str, EntityDocument]] = field(default_factory=list)
    out: list[Diagnostic] = field(default_factory=list)
    # What validation parsed, for resolution to reuse instead of parsing again: (id(node), what)
    # -> value, where what is "source" ((path, steps) of a field mapping), "bounds" (a range
    # rule's bounds as SQL literal text), "charset" ((mode, ranges) of a charset rule),
    # "left"/"right" (a reconcile side), "unmapped" (a mapping's unmapped columns), "redact" (a
    # quarantine block's redacted columns). Keyed by identity because the grammar nodes are not
    # hashable; they live as long as `loaded`.
    parsed: dict = field(default_factory=dict)

    def keep(self, node, what: str, value) -> None:
        """Record a value parsed from `node`, for resolution (Validated.parsed_value)."""
        self.parsed[(id(node), what)] = value

    def report(self, file: str, line: int, message: str, code: str = "SPEC_INVALID") -> None:
        self.out.append(Diagnostic(file, line or 1, message, code))

    def entity(self, name: str) -> Optional[Entity]:
        found = self.entities.get(name)
        return found[1] if found else None

    def mappings_of(self, entity: str) -> list[tuple[str, MappingDocument]]:
        return [(f, m) for f, m in self.mappings if m.target == entity]

    def declares_table(self, qualified: str) -> bool:
        """Whether a `tables_version: 1` document declares `<schema>.<table>`."""
        return any(qualified in doc.tables for _f, doc, _r in self.loaded.table_docs)


def joins_quality(ent: Entity, mapping_docs) -> bool:
    """Whether an entity joins the quality system (`quality:`, `quarantine:` or a field rule of one
    of its mappings, `mapping_docs` as (file, MappingDocument)): such an entity gets flags and a
    `<entity>__reject` table. Resolution (`Entity.opted_in`) and the target limits read this one test."""
    return bool(ent.quality) or ent.quarantine is not None or any(
        fm.quality for _f, d in mapping_docs for fm in list(d.key.values()) + list(d.fields.values()))


def build_context(loaded: LoadedSpec) -> Context:
    ctx = Context(loaded=loaded)
    unread = {(d.file, d.line) for d in loaded.diagnostics if d.code == "SPEC_GRAMMAR"}
    for file, doc, _raw in loaded.entity_docs:
        ctx.docs.append((file, doc))
        for name, ent in doc.entities.items():
            if name in ctx.entities:
                first, kept = ctx.entities[name]
                if len(ent.fields) > len(kept.fields):
                    # the fuller declaration is judged (a stub copy in a file sorting first left the
                    # real one unjudged and every mapping into it read as mapping undeclared fields,
                    # an outside tester, session 41); the refusal stands at the other
                    ctx.entities[name] = (file, ent)
                    ctx.report(first, kept.line() or 1, f"entity `{name}` is declared again in {file} (which declares "
                               f"more fields, so assay judges that one); give one of them another name, or delete the copy.")
                    continue
                ctx.report(file, ent.line() or doc.line("entities"), f"entity `{name}` is declared again (first in {first}); give one of them another name.")
                continue
            ctx.entities[name] = (file, ent)
        for rel in doc.relationships:
            # A name that did not read (said by the grammar) and folds to one taken is not a second
            # problem: the one whose name reads is judged (spec/standins.py, `folded_name`).
            if rel.name in ctx.relationships and (file, rel.line("name")) in unread:
                continue
            first = ctx.relationships.get(rel.name)
            if first and (first[0], first[1].line("name")) in unread:
                ctx.relationships[rel.name] = (file, rel)
                continue
            if rel.name in ctx.relationships:
                ctx.report(file, rel.line("name"), f"relationship `{rel.name}` is declared twice; relationship names are unique across the project: rename one, or delete the copy.")
                continue
            ctx.relationships[rel.name] = (file, rel)
    for file, doc, _raw in loaded.mapping_docs:
        ctx.mappings.append((file, doc))
    return ctx


def did_you_mean(name: str, choices, listed: bool = False) -> str:
    import difflib

    names = sorted(choices)
    guess = difflib.get_close_matches(name, names, n=1)
    if guess:
        return f" Did you mean `{guess[0]}`?"
    # no near name: with `listed`, the names there are, so that the sentence still says what to write
    if not names or not listed:
        return ""
    shown = ", ".join(f"`{n}`" for n in names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    return f" Write one of {shown}."
