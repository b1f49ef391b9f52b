"""What `assay explain` says of the entity's builds beside a key's own rows: loads bronze holds that
the last build did not judge, the history of a key bronze no longer delivers, the rules the last
run counted, and a delivery whose ingestion metadata stops the build. `ex` is the
`explain.Explainer` asking (its reader, relations and entity)."""

from __future__ import annotations

from typing import Optional

from .explanation import open_rejects_sentence, unpublished_because, value_text
from .ir.model import INGESTION_COLUMNS


def unjudged_loads(ex) -> Optional[str]:
    """A sentence when bronze holds loads the staged relation does not: the entity's last build
    ran before them (or a build since skipped or stopped it), so every count here is as of that
    build, not of bronze now (an outside tester, session 43, read `1 delivery in bronze` of a key
    bronze held twice). An incremental entity's ledger keeps only the latest delivery of a source
    row, so its loads are read from `<entity>__loads`, which every build rebuilds before the ledger:
    a load it does not mark `_settled` of which the ledger holds no row is one no build judged (an
    outside tester, session 49, was told a key of a load an ingestion-metadata stop left unjudged
    was not in bronze). A load whose every row a later load of the same build superseded reads as
    unjudged too: the ledger keeps none of its rows."""
    if not ex.entity.has_ingestion_metadata:
        return None
    if ex.entity.materialized == "incremental":
        # `_settled` is whether the ledger held the load alike before the build that wrote the table:
        # a load that build went on to judge is unsettled too, and the ledger holds its rows (an
        # outside tester, session 49, was told the load just judged had not been)
        sql = (f"select distinct cast(l._load_id as varchar) from {ex.loads} as l where not l._settled and l._load_id is "
               f"not null and not exists (select 1 from {ex.staged} as s where s._mapping = l._mapping and "
               "s._load_id = l._load_id) order by 1")
    else:
        loads = " union ".join(f"select distinct cast(_load_id as varchar) as l from {ex.relation(ex.bronze, source)}"
                               for source in sorted(set(ex.sources.values())))
        sql = (f"select l from ({loads}) as b where l is not null and l not in "
               f"(select cast(_load_id as varchar) from {ex.staged} where _load_id is not null) order by l")
    try:
        rows = ex.query(sql, ())
    except Exception:  # noqa: BLE001 - bronze (or the loads table) unreadable here: the rest of the answer stands
        return None
    if not rows:
        return None
    names = [str(r[0]) for r in rows]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return (f"Bronze holds {len(names)} {'load' if len(names) == 1 else 'loads'} ({shown}) that the last build of "
            f"{ex.entity.name} did not judge (it ran before {'it' if len(names) == 1 else 'them'}, or a build since "
            "did not write the entity): what follows is as of that build; the next build judges them.")


def gone_history(ex, key: dict) -> Optional[dict]:
    """The versions of a type-2 `key` that bronze no longer delivers (decision 0968): the history
    still holds them, closed by the build that stopped seeing the key (0415). None when the
    entity keeps no history or holds no version of the key."""
    where, params = ex._key_match(key)
    try:
        closing = ex._closing_column()
        if closing is None:
            return None
        n, current = ex.query(f"select count(*), count(*) - count({ex.relation(closing)}) "
                              f"from {ex.published} where {where}", params)[0]
    except Exception:  # no history published yet: nothing of the key to tell beyond bronze's silence
        return None
    return {"versions": int(n), "current": int(current or 0)} if n else None


def gone_sentence(ex, history: dict, rejects: list[dict], delivered: bool = False) -> str:
    """What a type-2 key the entity does not hold has left in the history (`gone_history`): a key
    bronze no longer delivers, or (`delivered`) one whose judged delivery the build did not admit,
    whose reject rows the sentence before this one has told (an outside tester, session 45, read
    "bronze no longer delivers" and "0 open reject rows" under "2 deliveries ... 1 open reject row")."""
    n, current = history["versions"], history["current"]
    versions = f"{n} {'version' if n == 1 else 'versions'}"  # "1 version"; closed: "1 closed version"
    tail = "" if delivered else open_rejects_sentence(rejects)
    if delivered:
        if current:
            return (f"Its history {ex.published_name} holds {versions} of it, {current} still current: the build that "
                    "did not admit its newest delivery has not closed it yet (on SQLMesh the history takes a build in "
                    "at the next run; decision 0415).")
        return (f"Its history {ex.published_name} holds {versions.replace(' ', ' closed ', 1)} of it and no current one: "
                "a key whose newest delivery is not admitted has its version closed (decision 0415).")
    if current:
        return (f"Its history {ex.published_name} holds {versions} of it, {current} still current: no build has run "
                "since bronze stopped delivering it, and the next one closes it (decision 0415)." + tail)
    return (f"It is not in the entity: its history {ex.published_name} holds {versions.replace(' ', ' closed ', 1)} "
            "of it and no current one (a key bronze no longer delivers "
            "has no current version: decision 0415)." + tail)


def metadata_why(ex, d) -> list[str]:
    """Why the build stops on a delivery whose `_load_id` or `_ingested_at` does not read, where
    the entity reads the ingestion metadata: the build judged it ("kept" alone hid why the build
    did not publish: an outside tester, session 48)."""
    m = next((m for m in ex.entity.mappings if m.name == d.mapping), None)
    if not ex.entity.has_ingestion_metadata or m is None or not set(INGESTION_COLUMNS) <= set(m.bronze_columns):
        return []
    bad = [c for c, v in (("_load_id", d.load_id), ("_ingested_at", d.ingested_at)) if v is None]
    if not bad:
        return []
    one = len(bad) == 1
    return [f"its {' and '.join(bad)} {'is' if one else 'are'} missing or {'does' if one else 'do'} not read as "
            f"{'an instant' if bad == ['_ingested_at'] else 'a value'}: the ingestion-metadata check stops the "
            "build on such a row"]


def rules_run(ex) -> Optional[frozenset]:
    """The rules the entity's latest run in the quality history counted (the mart holds one row
    per rule of the spec that run built, failing or not); None when it holds no run of the
    entity or cannot be read. Read once."""
    if not hasattr(ex, "_ran"):
        mart = ex.relation(ex.project.schema("gold"), "mart_data_quality")
        name = ex.entity.name
        try:
            rows = ex.query(f"select rule from {mart} where entity = ? and run_started_at = "
                            f"(select max(run_started_at) from {mart} where entity = ?)", (name, name))
        except Exception:  # noqa: BLE001 - no quality history here: the staged columns decide alone
            rows = []
        ex._ran = frozenset(str(r[0]) for r in rows) or None
    return ex._ran


def published_delivery(ex, lookup: tuple[str, tuple]) -> Optional[tuple[Optional[str], Optional[str]]]:
    """(source row id, load id) of the row the published table holds for the key `lookup` names
    (its WHERE and parameters), or None: nothing published, no such columns, or a type-2 history
    (whose open version keeps the delivery that last changed it, not the latest one). A build that
    staged and judged a new delivery and then stopped leaves the previous one published (an outside
    tester, session 49, was told the stopped build's delivery was published)."""
    if ex.entity.scd == "type2":
        return None
    try:
        if not {"_source_row_id", "_load_id"} <= {c.lower() for c in ex.columns(ex.published)}:
            return None
        rows = ex.query(f"select cast(_source_row_id as varchar), cast(_load_id as varchar) from {ex.published} "
                        f"where {lookup[0]}", lookup[1])
    except Exception:  # never published
        return None
    return (value_text(rows[0][0]), value_text(rows[0][1])) if rows else None


def unpublished_state(winner, published: Optional[tuple], rejects: list[dict], entity, sqlmesh: bool) -> Optional[str]:
    """The summary's state of a key whose published row is not what the last build judged (its build
    stopped or was set back), or None when it is: a kept delivery another than the published one, a
    diverted delivery while the published table still holds an earlier one, a quarantined delivery the
    reject table does not hold although bronze still does (retention deletes a reject row only once
    bronze no longer delivers it, decision 0951; an outside tester, session 49, was told a published
    build had not been published of a row `assay maintain` had deleted)."""
    held = published is not None and published != (winner.source_row_id, winner.load_id)
    was = {"quarantined": "quarantined", "failed": "diverted by a fail rule"}.get(winner.route, winner.route)
    if winner.route == "kept":
        if not held:
            return None
        because = unpublished_because(entity, sqlmesh)
        return (f"The last build kept its delivery {winner.source_row_id} (load {winner.load_id}), but the published "
                f"table holds delivery {published[0]} of load {published[1]} ({because}).")
    unrecorded = (winner.route == "quarantined" and entity.has_reject and winner.in_bronze
                  and not any((r["source_relation"], r["_source_row_id"]) == (winner.source_relation, winner.source_row_id)
                              for r in rejects))
    if not held and not unrecorded:
        return None
    because = unpublished_because(entity, sqlmesh)
    state = f"The last build did not keep it: its judged delivery {winner.source_row_id} was {was}"
    if held:
        state += f"; the published table still holds delivery {published[0]} of load {published[1]}"
    if unrecorded:
        state += "; the reject table does not hold it: the build that judged it stopped before writing it"
    return state + f" ({because})."


def referential_as_judged(entity, fired: list[dict]) -> list[str]:
    """On an incremental entity, a referential verdict is the one its delivery got when it arrived:
    a parent that arrives later does not judge it again (docs/incremental.md), so explain says when
    the verdict was given and what gives it again (an outside tester, session 49, read "matches no
    merchant" of a parent the warehouse held by then)."""
    if entity.materialized != "incremental":
        return []
    names = {r.name for r in entity.rules if r.kind == "referential"}
    judged = sorted(v["rule"] for v in fired if v["rule"] in names)
    if not judged:
        return []
    return [f"{', '.join(judged)}: judged when this delivery arrived; a parent that arrived since does not change it "
            "(an incremental entity judges each delivery once): a full refresh or a re-delivery judges it again "
            "(docs/incremental.md)"]
