"""Text that names a time of day, and what its zone says (decisions 0998, 0967, 1149).

Text is read by the zone written after its time:

- none (`2026-03-01 10:00:00`), or a `Z` right after the time: the engine's own cast, the wall
  clock as it is written (a `timestamp` field's value; `Z` is UTC to every engine), or as a wall
  clock of the zone `to_utc` names;
- an ISO 8601 offset (`+01:00`, `-07`, `+0530` refused): read as ISO 8601 (`parse_ts`) and
  converted to UTC;
- `Z`, `UTC` or `utc` (decision 0978: a lower-case `z` is no zone): that instant, the text before it
  read as UTC;
- anything else (`+01:00:00`, `+1`, `UTC+01:00`, `Z+01:00`, `PM`): no instant assay reads alike on
  every engine, so a coercion failure (a raising read: assay's sentence). The engines' own casts
  disagreed there: DuckDB refused such text, PostgreSQL kept its wall clock and dropped the zone,
  Spark applied some (an outside tester, session 43).

Spaces around the text are trimmed before the zone is read (`2026-03-01T10:00:00+01:00 ` was
quarantined).
"""

from __future__ import annotations

from typing import Optional

from .spelling import Spelling, Sql

# A time of day, then a zone: something after a space, a character that is no digit, dot, colon or
# `Z`, or a `Z` with more after it. The clock is matched whole, so `10:00` of `10:00:00` (followed
# by `:`) is not taken for its end. A `Z` right after the time is no zone here: every engine's cast
# reads it as UTC, and it is the common form of an instant, so its rows pay one regex test, as
# zone-less ones do.
_CLOCK = "[0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:[.][0-9]*)?"
ZONED = _CLOCK + "(?:\\s+[^\\s]|[^0-9.:\\sZ]|Z\\s*[^\\s])"
# Any zone, `Z` too: `to_utc` reads zone-less text as a wall clock of its zone, which `Z` is not.
ANY_ZONE = _CLOCK + "(?:\\s+[^\\s]|[^0-9.:\\s])"
# A UTC offset right after a time of day (`05:30:00-07`, `05:30+05:30`, `05:30:00.5 +0530`): the
# ISO 8601 reading takes the forms it spells and refuses the others.
UTC_OFFSET = _CLOCK + " *[+-][0-9]{2}(?::?[0-9]{2})?\\s*$"
# `Z` or `UTC` after the time: the instant is the text before it, read as UTC.
UTC_NAMED = "^\\s*(.*" + _CLOCK + ") *(?:Z|UTC|utc)\\s*$"


def text_to_instant(sp: Spelling, text: str, safe: bool, local: Optional[str] = None) -> str:
    """The instant `text` names (see the module docstring). `local`: how text without a zone is
    read (default: the engine's cast of it, the guarded one when `safe`); `safe` false (an entity
    not opted in to quality): a zone assay does not read stops the build with assay's sentence."""
    trimmed = sp.call("trim_white_space", Sql(text))
    offset = sp.call("parse_ts", Sql(trimmed), "ISO8601")
    named = sp.cast(sp.call("regex_extract", Sql(trimmed), UTC_NAMED, 1), "timestamp", safe)
    zoned = sp.call("regex_matches", Sql(text), ZONED if local is None else ANY_ZONE)
    refused = "null"
    if not safe:
        said = sp.string("assay: a timestamp's zone after its time is not an ISO 8601 offset (+hh:mm), Z or UTC")
        refused = sp.cast(sp.sql("case when {} then {} end", zoned, said), "timestamp", False)
        offset = sp.sql("coalesce({}, {})", offset, refused)
    return sp.sql("case when not {zoned} then {local} when {o} then {offset} when {n} then {named} else {refused} end",
                  zoned=zoned, local=local or sp.cast(text, "timestamp", safe), o=sp.call("regex_matches", Sql(text), UTC_OFFSET),
                  offset=offset, n=sp.call("regex_matches", Sql(text), UTC_NAMED), named=named, refused=refused)
