"""`assay explain`: why a key (or one source row) is where it is, in plain sentences.

Everything comes from what the last build left in the warehouse: the staged relation (one row
per bronze delivery with its transformed values, dedupe rank, fired rules and route), the bronze
rows themselves, the published entity and the reject table. Nothing is re-judged here: the
explanation is the build's own account, put into words with the spec's rules beside it.
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from collections import Counter
from typing import Any, Callable, Optional

from .explanation import LIMIT, ROUTE_WORDS, Delivery, Explanation, dropped_sentence, open_rejects_sentence, spec_changed, unpublished_because  # noqa: F401 - Delivery is re-exported
from .explain_builds import (gone_history, gone_sentence, metadata_why, published_delivery, referential_as_judged,
                             rules_run, unjudged_loads, unpublished_state)
from .explain_paths import text_at_path, unreadable_path
from .explanation import flag_list as _flags, reject_entry as _reject_entry, value_text as _text
from .ir.model import DEDUPE_TAIL, Entity, Project, Rule
from .lower.rules import judges_the_dedupe
from .privacy import HIDDEN, REDACTED, pii_bronze_columns, pii_columns, pii_paths, shown_values
from .redaction import NOT_JSON, inside
from .reject_keys import key_values_hold, key_values_narrowing, typed_key_text

Query = Callable[[str, tuple], list[tuple]]  # sql with `?` placeholders -> rows

def delivered_foreign_key(entity: Entity, rule: Rule, mapping: Optional[str], bronze: dict) -> dict[str, tuple[str, Any]]:
    """{foreign key column: (its bronze path, the value bronze delivered)} of a referential rule, read
    from the delivery's bronze row: what the entity shows as '__unknown__' (or what a flag judged)."""
    m = next((m for m in entity.mappings if m.name == mapping), None)
    out: dict[str, tuple[str, Any]] = {}
    for column, _ in rule.param("columns", ()) if m is not None else ():
        src = m.source_for(column)
        if src is None or src.bronze_column not in bronze:
            continue
        value = bronze[src.bronze_column]
        for step in src.path[1:]:  # a path inside a JSON column
            try:
                value = (json.loads(value) if isinstance(value, str) else value or {}).get(step)
            except (AttributeError, ValueError):
                value = None
                break
        out[column] = ("$." + ".".join(src.path), value)
    return out


class Explainer:
    """Gathers the rows of one key (or source row) of one entity and explains them."""

    def __init__(self, project: Project, entity: Entity, query: Query, columns: Callable[[str], list[str]],
                 relation: Callable[..., str], sqlmesh: bool = False):
        """`query`, `columns` and `relation` (a dotted name, quoted) are a `runtime.warehouse.Reader`'s;
        `sqlmesh`: the project is a SQLMesh project (its type-2 history catches up a run later)."""
        self.project, self.entity, self.query, self.columns, self.relation = project, entity, query, columns, relation
        self.sqlmesh = sqlmesh
        self._built_columns: Optional[frozenset] = None  # the staged relation's, read once (`_staged_columns`)
        silver = project.schema("silver")
        self.staged = relation(silver, f"{entity.name}__staged")
        self.loads = relation(silver, f"{entity.name}__loads")  # an incremental entity's bronze loads
        self.published = relation(silver, entity.name)
        self.published_name = f"{silver}.{entity.name}"  # as a sentence names it
        self.reject = relation(silver, f"{entity.name}__reject")
        self.bronze = project.schema("bronze")
        self.sources = {m.name: m.source for m in entity.mappings}
        # Bronze columns `quarantine.redact` names: never shown; pii fields and the bronze columns
        # they are read from: named, their values hidden (privacy.py).
        self.redacted = tuple(entity.redact)
        # JSON columns a redaction reaches inside: a value of one that is not JSON is never shown
        self.redacted_inside = frozenset(inside(entity.redact))
        self.pii_columns, self.pii_bronze = pii_columns(entity), pii_bronze_columns(entity)
        # The staged rows explained, as (condition, values): bronze and reject rows are read for all
        # of them at once (`_held`), never one query per delivery, which on a key delivered 200,000
        # times scanned bronze 200,000 times (probe R6).
        self._scope: list[tuple[str, tuple]] = []
        self._held: dict[str, tuple[list[str], dict]] = {}

    # ------------------------------------------------------------------ gathering
    def _key_match(self, key: dict[str, str]) -> tuple[str, tuple]:
        """The condition (and its values) of the rows of `key`: a timestamp, date or decimal part is
        compared as a value of its type, so `2026-12-05T01:00:00Z` (as the report and the reject
        table write it), `2026-12-05 01:00:00` and `104.5` against `104.50` all find their row on
        every engine; any other part as text."""
        parts, params = [], []
        for k in self.entity.key:
            column = self.entity.column(k)
            assay_type = column.type if column is not None else "string"
            typed = typed_key_text(str(key[k]), assay_type)
            if typed is None:
                parts.append(f"cast({self.relation(k)} as varchar) = ?")
                params.append(key[k])
            else:
                sql_type = "timestamp" if assay_type == "timestamp" else "date" if assay_type == "date" else \
                    f"decimal(38, {len(typed.partition('.')[2])})"
                parts.append(f"{self.relation(k)} = cast(? as {sql_type})")
                params.append(typed)
        return " and ".join(parts), tuple(params)

    def _staged_rows(self, where: str, params: tuple) -> list[dict]:
        self._scope.append((where, params))
        cols = self.columns(self.staged)
        rows = self.query(f"select * from {self.staged} where {where}", params)
        return [dict(zip(cols, r)) for r in rows]

    def _bronze_delivery(self, source: str, srid: Optional[str], load_id: Optional[str]) -> tuple[list[str], Optional[tuple]]:
        """Bronze's columns and its row of one delivery (None when bronze no longer holds it), as
        delivered: every value, for the callers to show (`_bronze_row`) or judge (`_raw_bronze`)."""
        if source not in self._held:
            self._held[source] = self._hold_bronze(source)
        cols, held = self._held[source]
        if srid is None or "_source_row_id" not in cols:
            return cols, None
        return cols, held.get((srid, load_id) if load_id is not None and "_load_id" in cols else (srid, None))

    def _in_scope(self, column: str) -> tuple[str, tuple]:
        """`column in (...)`: the `_source_row_id`s of the staged rows explained, as a subquery."""
        where = " or ".join(f"({w})" for w, _ in self._scope) or "1 = 0"
        params = tuple(p for _, ps in self._scope for p in ps)
        return f"{column} in (select cast(_source_row_id as varchar) from {self.staged} where {where})", params

    def _hold_bronze(self, source: str) -> tuple[list[str], dict]:
        """Bronze's columns and its rows of the explained deliveries, in one query, by
        (`_source_row_id`, `_load_id`) and by `_source_row_id` alone (the first row read)."""
        rel = self.relation(self.bronze, source)
        cols = self.columns(rel)
        if "_source_row_id" not in cols:
            return cols, {}
        where, params = self._in_scope("cast(_source_row_id as varchar)")
        held: dict = {}
        at_srid, at_load = cols.index("_source_row_id"), cols.index("_load_id") if "_load_id" in cols else None
        for row in self.query(f"select * from {rel} where {where}", params):
            srid = _text(row[at_srid])
            held.setdefault((srid, None), row)
            if at_load is not None:
                held.setdefault((srid, _text(row[at_load])), row)
        return cols, held

    def _bronze_row(self, source: str, srid: str, load_id: Optional[str]) -> dict:
        cols, row = self._bronze_delivery(source, srid, load_id)
        return shown_values({c: _text(v) for c, v in zip(cols, row)}, self.pii_bronze, self.redacted) if row else {}

    def _raw_bronze(self, source: str, srid: Optional[str], load_id: Optional[str], column: str) -> Any:
        """One bronze value as delivered, for a judgement about it (whether it is JSON); never shown."""
        cols, row = self._bronze_delivery(source, srid, load_id)
        return _text(dict(zip(cols, row)).get(column)) if row else None

    def _rejects(self, srids: list[tuple[str, str, str]]) -> list[dict]:
        """The reject rows of (source relation, mapping, `_source_row_id`)s: a reject row is one
        mapping's (decision 0947), so a key built by one mapping of a relation two mappings read
        is not told the other mapping's reject row of the same bronze row."""
        if not self.entity.has_reject or not srids:
            return []
        try:
            cols = self.columns(self.reject)
        except Exception:  # never built: nothing was ever diverted
            return []
        # every reject row of the explained deliveries in one query, then told in the order asked
        wanted = set(srids)
        where, params = self._in_scope("_source_row_id")
        by_srid: dict[tuple, list[tuple]] = {}
        for r in self.query(f"select * from {self.reject} where {where}", params):
            row = dict(zip(cols, r))
            asked = (row.get("source_relation"), row.get("mapping"), row.get("_source_row_id"))
            if asked in wanted:
                by_srid.setdefault(asked, []).append(r)
        found = []
        for source, mapping, srid in sorted(wanted, key=lambda asked: tuple(part or "" for part in asked)):
            for r in by_srid.get((source, mapping, srid), []):
                found.append(_reject_entry(dict(zip(cols, r)), source, srid))
        return found

    def _dropped_rejects(self, key: Optional[dict[str, str]], source_row_id: Optional[str]) -> list[dict]:
        """The reject rows of a key (or of a source row) no staged row holds: bronze dropped the
        deliveries after the build diverted them, and the reject table keeps them. They are what
        an operator reads before `assay replay`, which re-delivers such rows (decision 0920), so
        explain finds them by the reject table's own `_source_row_id` or `key_values`."""
        if not self.entity.has_reject or (key is None and source_row_id is None):
            return []
        try:
            cols = self.columns(self.reject)
        except Exception:  # never built: nothing was ever diverted
            return []
        if source_row_id is not None:
            where, params = "cast(_source_row_id as varchar) = ?", (source_row_id,)
        elif "key_values" in cols:
            where, params = key_values_narrowing(self.entity, key)
        else:
            return []
        rows = [dict(zip(cols, r)) for r in self.query(f"select * from {self.reject} where {where}", params)]
        if source_row_id is None:
            rows = [r for r in rows if key_values_hold(self.entity, r.get("key_values"), key)]
        entries = [_reject_entry(r, r.get("source_relation"), _text(r.get("_source_row_id"))) for r in rows]
        return sorted(entries, key=lambda e: tuple(str(e[k] or "") for k in (
            "source_relation", "_source_row_id", "first_seen", "reject_id")))

    # ------------------------------------------------------------------ judging in words
    def _rules_for(self, mapping: str) -> list[Rule]:
        return [r for r in self.entity.rules if r.mapping is None or r.mapping == mapping]

    def _delivery(self, row: dict) -> Delivery:
        mapping = row.get("_mapping")
        source = self.sources.get(mapping, mapping)
        d = Delivery(
            mapping=mapping, source_relation=source, source_row_id=_text(row.get("_source_row_id")),
            load_id=_text(row.get("_load_id")), ingested_at=_text(row.get("_ingested_at")),
            route=row.get("_route"), dedupe_rank=int(row.get("_dedupe_rank") or 1),
            superseded=int(row.get("_delivery_rank") or 1) > 1, delivery_rank=int(row.get("_delivery_rank") or 1),
            values=shown_values({c.name: _text(row.get(c.name)) for c in self.entity.columns}, self.pii_columns),
            failed_rules=_flags(row.get("_failed_rules")),
            key_values=tuple(_text(row.get(k)) for k in self.entity.key),
        )
        d.late = bool(row.get("_late")) and d.route != "deduped"
        d.bronze = self._bronze_row(source, d.source_row_id, d.load_id)
        d.in_bronze = bool(d.bronze)  # the metadata columns are never hidden: a held row is never empty
        if d.source_row_id is None:
            # bronze holds it, but nothing names it there: it is not one the ledger kept (probe R6)
            d.in_bronze = True
            d.why.append("it has no _source_row_id, so its bronze row cannot be looked up; the ingestion-metadata "
                         "check stops the build on such a row")
        if d.route != "deduped" and not d.late:  # a late delivery is judged by no rule (decision 0401)
            judged = self._rules_for(mapping)
        elif d.route == "deduped" and not d.superseded:
            # a latest delivery that lost its key is judged by the casts of the dedupe order only
            # (decision 0018): a value that does not cast there stops the build, loser or not
            order = frozenset(k.column for k in self.entity.dedupe)
            judged = [r for r in self._rules_for(mapping) if judges_the_dedupe(r, order)]
        else:
            judged = []
        if judged:
            fired = set(d.failed_rules)
            built = self._staged_columns()
            ran = rules_run(self)
            for rule in judged:
                # a rule on a column the build never staged, or one its quality history does not
                # count, was not judged by it (the spec changed since): "held" would claim a verdict
                # nobody reached (outside testers, sessions 40 and 48)
                unjudged = rule.name not in fired and ((rule.column is not None and rule.column not in built)
                                                       or (ran is not None and rule.name not in ran))
                d.verdicts.append({
                    "rule": rule.name, "disposition": rule.disposition, "kind": rule.kind,
                    "verdict": "fired" if rule.name in fired else "not judged by the last build" if unjudged else "held",
                })
            known = {r.name for r in self.entity.rules}
            for name in sorted(n for n in fired - known if not n.startswith(("_", "("))):
                d.verdicts.append({"rule": name, "disposition": None, "kind": None,
                                   "verdict": "fired (a rule the spec no longer declares)"})
            m = next((m for m in self.entity.mappings if m.name == mapping), None)
            for rule in judged:
                if rule.kind == "coercible" and rule.name in fired and m is not None:
                    src = m.source_for(rule.column)
                    if src is not None and not d.bronze:
                        # the delivery aged out of bronze since the build: its value is gone, and a
                        # NULL read in its place never fails a cast (probe 33, decision 0958)
                        d.coercions.append(f"{rule.column}: bronze $.{'.'.join(src.path)} did not become "
                                           f"{_a(src.target_type)} (the delivery is no longer in bronze, so its value "
                                           "is not shown; the reject row's raw payload keeps it)")
                    elif src is not None:
                        raw = d.bronze.get(src.bronze_column)
                        path = "$." + ".".join(src.path)
                        # a hidden (pii) column, or one a redaction could not rewrite (not JSON),
                        # is judged on its value, read here and never shown
                        left_out = raw == NOT_JSON and src.bronze_column in self.redacted_inside
                        text = self._raw_bronze(source, d.source_row_id, d.load_id, src.bronze_column) if raw == HIDDEN or left_out else raw
                        why = unreadable_path(text, src.path) if len(src.path) > 1 and isinstance(text, str) else None
                        if why is not None:
                            # a path read of text that is not JSON (decision 1123) or not of the
                            # shape the path reads (1130); of a pii or unrewritable column only the kind is told
                            shown = HIDDEN if raw == HIDDEN else REDACTED if left_out else repr(raw)
                            d.coercions.append(f"{rule.column}: bronze {src.bronze_column} = {shown} {why}, so {path} "
                                               f"could not be read and did not become {_a(src.target_type)}")
                        else:
                            # the value the path read, not the whole document around it (an outside
                            # tester, session 45); a hidden or unrewritable column stays as it is shown
                            at = text_at_path(raw, src.path) if len(src.path) > 1 and raw not in (HIDDEN, NOT_JSON) else None
                            shown = repr(raw) if at is None else repr(at)
                            d.coercions.append(f"{rule.column}: bronze {path} = {shown} did not become {_a(src.target_type)}")
        return d

    def _staged_columns(self) -> frozenset:
        """The staged relation's columns, lower-cased: the columns the last build judged."""
        if self._built_columns is None:
            self._built_columns = frozenset(c.lower() for c in self.columns(self.staged))
        return self._built_columns

    def _unknown_members(self, d: Delivery) -> list[str]:
        """The foreign keys of a delivery that matched no parent and became '__unknown__', with the
        key bronze delivered (the entity no longer holds it)."""
        out = []
        for rule in self.entity.rules:
            if rule.kind != "referential" or rule.name not in d.failed_rules or rule.param("on_missing") != "unknown_member":
                continue
            # a JSON column that also feeds a pii field is hidden from the bronze row shown; the
            # foreign key's own path is no pii value, read from the column as delivered (an outside
            # tester, session 49, was told it was None)
            bronze = {c: (self._raw_bronze(d.source_relation, d.source_row_id, d.load_id, c) if v == HIDDEN else v)
                      for c, v in d.bronze.items()}
            for column, (path, value) in delivered_foreign_key(self.entity, rule, d.mapping, bronze).items():
                shown = HIDDEN if column in self.pii_columns or path in pii_paths(self.entity) else repr(value)
                out.append(f"{column}: the delivered {path} = {shown} matches no {rule.param('parent')}, so the entity "
                           f"holds '__unknown__' (relationship {rule.param('relationship')})")
        return out

    def _dedupe_reason(self, winner: Delivery, loser: Delivery, staged: dict[str, dict]) -> str:
        if loser.superseded:
            # "later" in the delivery order, which is not the order of the loads: a load may
            # bring an older delivery (an earlier _ingested_at) than one already stored
            return ("superseded: the same source row has a later delivery, by _ingested_at and then _load_id "
                    "(decision 0014), so only that latest delivery is judged")
        # The spec's order, then the tail that makes it total (decision 0014), each column once.
        order: list[tuple[str, str]] = []
        for col in [k.column for k in self.entity.dedupe] + list(DEDUPE_TAIL):
            if (col, col) not in order:
                order.append((col, col))
        w, l = staged[winner.identity], staged[loser.identity]
        by = winner.source_row_id if winner.source_row_id is not None else "the delivery without a _source_row_id"
        for label, col in order:
            a, b = w.get(col), l.get(col)
            if a != b:
                if b is None:
                    return f"lost the dedupe to {by}: its {label} is NULL, and NULLs sort last"
                if col in self.pii_columns:  # which way a pii value compares is told, never the value
                    return (f"lost the dedupe to {by}: its {label} (pii: not shown) sorts after the winner's "
                            f"(the latest wins; order: {', '.join(c for c, _ in order)}, each descending)")
                return (f"lost the dedupe to {by}: {label} {_text(a)!r} beats {_text(b)!r} "
                        f"(the latest wins; order: {', '.join(c for c, _ in order)}, each descending)")
        return f"lost the dedupe to {by}"

    def _late_reason(self, d: Delivery) -> str:
        lag = self.entity.incremental_lag
        window = "the newest _ingested_at the ledger held" + (f" minus the arrival lag {lag}" if lag else "")
        return (f"arrived late: its _ingested_at {d.ingested_at} was older than the ledger's watermark ({window}) when "
                "the build processed it, so it was not ranked and not judged (no rule ran on it) and was quarantined as "
                "_late_arrival (decision 0401); a full refresh of the entity or `assay replay` places it")

    def explain(self, key: Optional[dict[str, str]] = None, source_row_id: Optional[str] = None,
                limit: int = LIMIT) -> Explanation:
        """The explanation of `key` (or of `source_row_id`'s deliveries and its key's). A key with more
        than `limit` deliveries (0: no limit) lists the first `limit` in the dedupe order, the judged
        one first, and counts the rest (decision 0995)."""
        total: Optional[int] = None
        open_rejects: Optional[int] = None
        if source_row_id is not None:
            rows = self._staged_rows("cast(_source_row_id as varchar) = ?", (source_row_id,))
            if rows and key is None:
                # the key of the source row's latest delivery (a re-send may have changed it, and
                # two mappings may share the id): never the engine's first row (session 40)
                latest = min(rows, key=lambda r: (int(r.get("_delivery_rank") or 1), str(r.get("_mapping") or ""),
                                                  str(r.get("_load_id") or "")))
                key = {k: _text(latest.get(k)) for k in self.entity.key}
        if key is not None and all(v is not None for v in key.values()):
            where, params = self._key_match(key)
            by_key, total = self._key_rows(where, params, limit)
            if total is not None:
                open_rejects = self._open_reject_count(where, params)
            seen = {_identity(r, self.entity.key) for r in rows} if source_row_id is not None else set()
            rows = (rows if source_row_id is not None else []) + [r for r in by_key if _identity(r, self.entity.key) not in seen]
        # A delivery without `_source_row_id` or `_load_id` is staged before the ingestion-metadata
        # check stops the build; it is explained as any other (probe R6), NULL sorting first.
        # A delivery is one mapping's row of one load: two mappings may share a source row id and
        # a load id (decision 1135)
        staged = {_identity(r, self.entity.key): r for r in rows}
        # With --source-row-id the source row's deliveries may be of other keys than the one
        # explained (a re-send that changed it): they are listed, but only the key's own compete
        other_keys = {_identity(r, self.entity.key) for r in rows if key is not None and not self._of_key(r, key)}
        # one source row twice in one load: a broken load, which the ingestion-metadata check stops on
        # (counted over the rows read: two copies of one row are one entry of `staged`)
        delivered = Counter(_identity(r, self.entity.key)[:3] for r in rows)
        repeated = {i for i, n in delivered.items() if n > 1}
        deliveries = sorted((self._delivery(r) for r in rows),
                            key=lambda d: (d.dedupe_rank, d.superseded, d.delivery_rank, d.source_row_id or "", d.load_id or ""))
        # A late delivery was not ranked (decision 0401): it wins nothing, and speaks for the key only
        # when no delivery of it was ranked.
        winner = next((d for d in deliveries if d.dedupe_rank == 1 and not d.superseded and d.route != "deduped"
                       and not d.late and d.identity not in other_keys), None)
        for d in deliveries:
            if d.identity[:3] in repeated:
                d.why.append(f"its source row {d.source_row_id} is delivered more than once in load {d.load_id}: broken "
                             "ingestion metadata, on which the ingestion-metadata check stops the build")
            if d.identity in other_keys:
                other = shown_values({k: _text(staged[d.identity].get(k)) for k in self.entity.key}, self.pii_columns)
                # a NULL key part names no key `assay explain` could take (it printed `... None`,
                # which found nothing: an outside tester, session 45); the values are shell-quoted
                command = ("" if any(k in self.pii_columns for k in self.entity.key) or None in other.values() else
                           f": `assay explain {shlex.quote(self.entity.name)} "
                           f"{' '.join(shlex.quote(str(v)) for v in other.values())}` explains it")
                d.why.append("a delivery of another key (" + ", ".join(f"{k}={'NULL' if v is None else repr(v)}"
                                                                      for k, v in other.items())
                             + f"), not of the key explained{command}")
                if d.superseded:
                    d.why.append("superseded by a later delivery of the same source row (decision 0014)")
            elif d.late:
                d.why.append(self._late_reason(d))
            elif d.route == "deduped" and d.identity[:3] in repeated:
                pass  # one of two copies of a row in one load (said above): neither is the later delivery
            elif d.route == "deduped" and winner is not None:
                d.why.append(self._dedupe_reason(winner, d, staged))
                d.why.extend(f"but its {v['rule']} ({v['disposition']}) fired: a column the dedupe order reads did not cast, "
                             "and that rule judges every latest delivery, losing ones too, so it stops the build (decision 0018)"
                             for v in d.verdicts if v["verdict"] == "fired")
            elif d.route == "deduped":
                d.why.append("superseded by a later delivery of the same source row (decision 0014)")
            else:
                fired = [v for v in d.verdicts if v["verdict"] == "fired"]
                judged = len([x for x in deliveries if x.route != "deduped" and not x.late and x.identity not in other_keys])
                if self.entity.dedupe and (judged > 1 or any(x.route == "deduped" for x in deliveries)):
                    d.why.append("won the dedupe: it is the latest delivery of this key under the dedupe order")
                elif judged > 1:  # no dedupe order: a repeated key is the key audit's to stop
                    d.why.append("another delivery of this key is judged too: the entity declares no `dedupe:`, "
                                 "so a key delivered by two source rows stops the build (the key audit)")
                elif any(x.route == "deduped" for x in deliveries):
                    d.why.append("the other deliveries of this key were superseded by a later delivery of their source row "
                                 "(decision 0014); the entity declares no `dedupe:`")
                if d.route == "kept":
                    d.why.append("kept" + (f" with flags: {', '.join(v['rule'] for v in fired)}" if fired else " with no rule fired"))
                elif fired:
                    worst = max(fired, key=lambda v: {"flag": 1, "quarantine": 2, "fail": 3}[v["disposition"]])
                    d.why.append(f"{d.route} because {worst['rule']} ({worst['disposition']}) fired; severity fail > quarantine > flag decides"
                                 + (f"; every rule that fired: {', '.join(v['rule'] for v in fired)}" if len(fired) > 1 else ""))
                d.why.extend(self._unknown_members(d))
                d.why.extend(referential_as_judged(self.entity, fired))
            d.why.extend(metadata_why(self, d))
        in_entity = False
        lookup = None
        if key is not None and all(v is not None for v in (key or {}).values()):
            lookup = self._key_match(key)
        elif winner is not None and winner.route == "kept" and winner.source_row_id is not None:
            # a key with a NULL part names no row (decision 0003): the kept delivery itself is looked up
            load = "_load_id is null" if winner.load_id is None else "cast(_load_id as varchar) = ?"
            lookup = (f"cast(_source_row_id as varchar) = ? and {load}",
                      (winner.source_row_id,) + (() if winner.load_id is None else (winner.load_id,)))
        if lookup is not None:
            try:
                closing = self._closing_column()  # a type-2 key is in the entity while a version is open
                current = f" and {self.relation(closing)} is null" if closing else ""
                in_entity = bool(self.query(f"select count(*) from {self.published} where {lookup[0]}{current}",
                                            lookup[1])[0][0])
            except Exception:  # a type-2 entity publishes through its snapshot; the staged route says it all
                in_entity = winner is not None and winner.route == "kept"
        rejects = self._rejects([(d.source_relation, d.mapping, d.source_row_id) for d in deliveries])
        if not deliveries:
            rejects = self._dropped_rejects(key if key and all(v is not None for v in key.values()) else None,
                                            source_row_id)
        if total is not None and source_row_id is not None:
            total += len([r for r in rows if not self._of_key(r, key)])  # the source row's own, of another key
        # a key part classified pii is told as hidden, given on the command line or read from the build
        shown_key = shown_values(key, self.pii_columns) if key else key
        published = published_delivery(self, lookup) if in_entity and lookup is not None and winner is not None else None
        summary = self._summary(shown_key, source_row_id, deliveries, winner, in_entity, rejects, total, open_rejects,
                                published)
        if other_keys and source_row_id is not None and total is None:  # said, not counted as the key's
            summary[0] = summary[0][:-1] + f" ({len(other_keys)} of another key, by the same source row)."
        changed = spec_changed(self.entity, self._staged_columns(), deliveries, rules_run(self)) if deliveries else None
        if changed:
            summary.insert(1, changed)
        unjudged = unjudged_loads(self)
        if unjudged:
            summary.insert(1, unjudged)
        # a type-2 key whose deliveries all went to another key (a re-send that changed it) still
        # has its closed versions in the history (an outside tester, session 44)
        history = gone_history(self, key) if lookup is not None and not (deliveries and in_entity) else None
        if history:
            summary.append(gone_sentence(self, history, rejects if not deliveries else [], delivered=bool(deliveries)))
        elif not deliveries and rejects and not in_entity:
            summary.append(dropped_sentence(self.entity.name, rejects))
        return Explanation(self.entity.name, dict(shown_key or {}), deliveries, rejects, in_entity, summary, history,
                           total if total is not None else len(deliveries), bool(unjudged))

    # ------------------------------------------------------------------ a key delivered many times
    def _key_rows(self, where: str, params: tuple, limit: int) -> tuple[list[dict], Optional[int]]:
        """The staged rows of a key, and None; or, when it has more than `limit` (0: no limit), the
        first `limit` in the dedupe order, the judged delivery first, and how many there are. Only
        the listed rows are read, and only their bronze and reject rows after them (probe R6: a key
        delivered 400,000 times printed 130 MB and held 1.6 GB)."""
        if limit <= 0:
            return self._staged_rows(where, params), None
        cols = self.columns(self.staged)
        rows = [dict(zip(cols, r)) for r in self.query(
            f"select * from {self.staged} where {where} order by {_listing_order(cols)} limit {int(limit) + 1}", params)]
        if len(rows) <= limit:
            self._scope.append((where, params))
            return rows, None
        rows = rows[:limit]
        total = int(self.query(f"select count(*) from {self.staged} where {where}", params)[0][0])
        listed = sorted({t for t in (_text(r.get("_source_row_id")) for r in rows) if t is not None})
        self._scope.append((f"cast(_source_row_id as varchar) in ({', '.join('?' for _ in listed)})", tuple(listed))
                           if listed else ("1 = 0", ()))
        return rows, total

    def _of_key(self, row: dict, key: dict) -> bool:
        return all(_text(row.get(k)) == key.get(k) for k in self.entity.key)

    def _open_reject_count(self, where: str, params: tuple) -> int:
        """The open reject rows of every delivery of the key, listed or not: each is one mapping's
        row of one bronze row (decision 0947); 0 when the entity has no reject table or none was built."""
        if not self.entity.has_reject:
            return 0
        try:
            mapping = " and s._mapping = r.mapping" if "mapping" in self.columns(self.reject) else ""
        except Exception:  # never built: nothing was ever diverted
            return 0
        # the key's condition names the staged columns unqualified: inside the subquery they are s's
        return int(self.query(
            f"select count(*) from {self.reject} as r where r.resolved_at is null and exists (select 1 from {self.staged} as s "
            f"where {where} and cast(s._source_row_id as varchar) = r._source_row_id{mapping})", params)[0][0])

    def _closing_column(self) -> Optional[str]:
        """The column that closes a version of a type-2 entity's history: the framework's
        (dbt_valid_to on a dbt snapshot, valid_to on SQLMesh), read off the published relation,
        which the explainer reads alike for both targets; None for an entity that keeps no history."""
        if self.entity.scd != "type2":
            return None
        names = {c.lower() for c in self.columns(self.published)}
        return next((c for c in ("dbt_valid_to", "valid_to") if c in names), None)

    def _summary(self, key, srid, deliveries, winner, in_entity, rejects, total=None, open_rejects=None,
                 published=None) -> list[str]:
        what = (f"{self.entity.name} " + ", ".join(f"{k}={v!r}" for k, v in (key or {}).items())) if key else f"{self.entity.name} source row {srid!r}"
        if not deliveries:
            return [f"{what}: no delivery of it is in bronze as of the last build (or the last build has not run)."]
        n = len(deliveries)
        held = sum(d.in_bronze for d in deliveries)
        head = f"{what}: {n} {'delivery' if n == 1 else 'deliveries'} in bronze."
        if total is not None:
            # only the listed deliveries' bronze rows were read: how many of the rest bronze still
            # holds is not claimed
            head = (f"{what}: {total} deliveries, {n} of them listed below (the judged one first, then in the dedupe "
                    "order; `--limit 0` lists every one).")
        elif held < n:  # the ledger outlives bronze (docs/incremental.md): say which count is which
            gone = n - held
            them = "it" if gone == 1 else "them"
            # a table entity keeps no ledger: its staged rows are the last build's, and bronze has
            # dropped some since (a bad load removed after it stopped the build: session 44)
            kept = (f"the ledger kept after bronze dropped {them}" if getattr(self.entity, "materialized", None) == "incremental"
                    else f"the last build judged; bronze has dropped {them} since")
            head = f"{what}: {n} {'delivery' if n == 1 else 'deliveries'}, {held} of them in bronze ({gone} {kept})."
        tail = open_rejects_sentence(rejects, open_rejects)
        late = [d for d in deliveries if d.late]
        if winner is None and late:
            one = len(late) == 1
            return [head, f"It is not in the entity: {'its delivery' if one else 'its deliveries'} "
                          f"{', '.join(d.source_row_id for d in late)} arrived late (older than the ledger's watermark), "
                          f"{'was' if one else 'were'} not ranked or judged, and {'was' if one else 'were'} quarantined "
                          "as _late_arrival." + tail]
        if winner is None:  # its open reject rows said too (a changed-key re-send leaves one open)
            where = ", and the published table still holds it." if in_entity else ", so it is not in the entity."
            return [head, "No delivery is judged: every one was superseded or deduped" + where + tail]
        stale = unpublished_state(winner, published, rejects, self.entity, self.sqlmesh)
        if stale:
            state = stale
        elif winner.route == "kept":
            state = ("It is in the entity (published)." if in_entity else
                     f"The last build kept it, but the published table does not hold it ({unpublished_because(self.entity, self.sqlmesh)}).")
        else:
            state = f"It is not in the entity: its judged delivery {winner.source_row_id} was {ROUTE_WORDS[winner.route]}."
        if late:
            one = len(late) == 1
            state += (f" {'Its delivery' if one else 'Its deliveries'} {', '.join(d.source_row_id for d in late)} arrived late, "
                      f"{'was' if one else 'were'} not ranked or judged, and {'was' if one else 'were'} quarantined as "
                      "_late_arrival.")
        # Always said, 0 included, so every answer has the same parts whether or not the key was ever
        # diverted (`1 open reject row.`, `0 open reject rows.`; docs/operating.md).
        return [head, state + tail]


def _identity(row: dict, key: tuple = ()) -> tuple:
    """(mapping, source row id, load id, key values) of a staged row, as `Delivery.identity`
    (decision 1135); `key`: the entity's key columns."""
    return (row.get("_mapping"), _text(row.get("_source_row_id")), _text(row.get("_load_id")),
            tuple(_text(row.get(k)) for k in key))


def _listing_order(cols: list[str]) -> str:
    """ORDER BY of a key's staged rows when only the first are listed: the judged delivery (latest,
    ranked first, not deduped, not late) first, then by dedupe rank, the superseded after (latest
    delivery first), then source row and load, NULLs first, as `Explainer.explain` sorts what it read."""
    names = set(cols)
    judged = [f"coalesce({c}, 1) = 1" for c in ("_delivery_rank", "_dedupe_rank") if c in names]
    judged += ["_route <> 'deduped'"] if "_route" in names else []
    judged += ["not coalesce(_late, false)"] if "_late" in names else []
    terms = [f"case when {' and '.join(judged)} then 0 else 1 end"] if judged else []
    terms += ["coalesce(_dedupe_rank, 1)"] if "_dedupe_rank" in names else []
    terms += ["case when coalesce(_delivery_rank, 1) > 1 then 1 else 0 end", "coalesce(_delivery_rank, 1)"] \
        if "_delivery_rank" in names else []
    return ", ".join(terms + ["cast(_source_row_id as varchar) nulls first", "cast(_load_id as varchar) nulls first"])


def _a(type_name: str) -> str:
    """`a date`, `an int`: the article a type name takes when read aloud."""
    return f"{'an' if type_name[:1] in 'aeiou' else 'a'} {type_name}"
