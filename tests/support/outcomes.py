"""Where each bronze row landed after a build, read back from the warehouse."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Observed:
    place: str  # entity | reject | deduped | nowhere
    flags: tuple = ()
    values: dict = field(default_factory=dict)
    places: int = 1

    def outcome(self, fk_columns: tuple = ()) -> str:
        if self.places != 1:
            return f"placed {self.places} times"
        if self.place == "reject":
            return "quarantine"
        if self.place == "deduped":
            return "dedupe_loser"
        if self.place == "entity":
            if any(self.values.get(c) == "__unknown__" for c in fk_columns) and any(f.endswith("_referential") for f in self.flags):
                return "unknown_member"
            return "flag" if self.flags else "pass"
        return "nowhere"


def _flags(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(v for v in value.split(",") if v)
    return tuple(value)


def observe(project, entity: str, columns: tuple = (), schema: str = "silver", scd: str = "type1") -> dict[str, Observed]:
    """srid -> where it landed. Counts placements so a doubly placed row is visible."""
    found: dict[str, Observed] = {}

    def place(srid, obs):
        if srid in found:
            found[srid].places += 1
        else:
            found[srid] = obs

    extra = "".join(f', "{c}"' for c in columns)
    table = f"{entity}__current" if scd == "type2" else entity
    for row in project.query(f'select _source_row_id, _quality_flags{extra} from {schema}."{table}"'):
        place(row[0], Observed("entity", _flags(row[1]), dict(zip(columns, row[2:]))))
    for (srid,) in project.query(f'select _source_row_id from {schema}."{entity}__reject" where resolved_at is null'):
        place(srid, Observed("reject"))
    for (srid,) in project.query(f"select _source_row_id from {schema}.\"{entity}__staged\" where _route = 'deduped'"):
        place(srid, Observed("deduped"))
    return found
