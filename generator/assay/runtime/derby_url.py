"""The Derby database a Spark profile's metastore JDBC URL names, read and rewritten in one place.

A Derby URL is `jdbc:derby:<subname>[;attribute=value]...`; the database is the subname or, when
given, the `databaseName=` attribute, which then wins. Two readers need it: the check that refuses
a command while another process holds the metastore (derby_lock) and `plan --data`'s copy of the
warehouse (plandata/sparkcopy), which points the copy's profile at the copied database and so can
only rewrite the attribute form (the form `assay init --engine spark` writes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

CONNECTION_URL = "spark.hadoop.javax.jdo.option.ConnectionURL"
_PREFIX = "jdbc:derby:"
_NAME = "databaseName"


@dataclass(frozen=True)
class DerbyDatabase:
    """The database a Derby URL opens: its name as written, and whether `databaseName=` names it."""

    name: str
    by_attribute: bool


def database(url: str) -> Optional[DerbyDatabase]:
    """The database `url` opens; None when it is not a Derby URL or names no database."""
    if not url.startswith(_PREFIX):
        return None
    subname, *attributes = url[len(_PREFIX):].split(";")
    found = DerbyDatabase(subname, False) if subname else None
    for attribute in attributes:
        key, _, value = attribute.partition("=")
        if key == _NAME and value:
            found = DerbyDatabase(value, True)
    return found


def with_database(url: str, name: str) -> str:
    """`url` with its `databaseName=` attribute(s) set to `name`; the caller has checked, with
    `database`, that the attribute names the database."""
    subname, *attributes = url[len(_PREFIX):].split(";")
    moved = [f"{_NAME}={name}" if a.partition("=")[0] == _NAME else a for a in attributes]
    return _PREFIX + ";".join([subname, *moved])
