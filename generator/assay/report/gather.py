"""The numbers of `assay report`, read from the warehouse into one plain dict (the `--json` twin).

Sources, all written by the builds themselves: `gold.mart_data_quality` (per run: the `(entity)`
accounting row and one row per rule), each entity's published table (`_quality_ok`), its reject
table (open rows, their age, examples), its staged relation (newest `_ingested_at` per mapping, for
freshness) and `<meta>.assay_check_results`. Nothing is re-judged here.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any, Callable, Optional

from ..ir.model import Entity, Project
from ..privacy import hidden_names, shown_values
from ..retention import bronze_holds
from ..runtime.warehouse import Memo

Query = Callable[[str, tuple], list[tuple]]  # sql with `?` placeholders -> rows
Columns = Callable[[str], list[str]]  # relation -> its column names

EXAMPLES_PER_RULE = 3
TOP_RULES = 10
# Reject rows are fetched for examples up to this many per entity: a report over a large history
# must not read whole reject tables to show three rows per rule.
EXAMPLE_SCAN = 500
# A value longer than this is cut in an example (keys never are: the example's explain command needs them whole).
EXAMPLE_CHARS = 200
AGE_BUCKETS = (("under 25% of retention", 0.25), ("25-50%", 0.5), ("50-75%", 0.75), ("75-100%", 1.0))


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, (dt.date, Decimal)):
        return str(value)
    return value


def _stamp(value: Any) -> Any:
    """A timestamp the builds recorded (UTC, without a zone) in ISO 8601: `2026-12-01T10:00:00Z`."""
    from ..runtime.table_states import iso_utc

    return iso_utc(value)


def _flags(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return sorted(str(v) for v in value)
    return sorted(p.strip().strip('"') for p in str(value).strip("{}").split(",") if p.strip())


def _json(value: Any) -> Any:
    if value is None or isinstance(value, (dict, list)):
        return value
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return str(value)


def _shown(value: Any, hidden: frozenset, redacted) -> Any:
    """A key or payload as the report may show it (privacy.py); text that is no object stays as it is."""
    return shown_values(value, hidden, redacted) if isinstance(value, dict) else value


def _clipped(value: Any) -> Any:
    """`value` with every text longer than EXAMPLE_CHARS cut there and its length said: an example
    shows what a row's values look like, and one 5 MB value made a 10 MB page (probe R6, decision 0991)."""
    if isinstance(value, dict):
        return {k: _clipped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clipped(v) for v in value]
    if isinstance(value, str) and len(value) > EXAMPLE_CHARS:
        return f"{value[:EXAMPLE_CHARS]}... ({len(value):,} characters)"
    return value


def _rule_filter(column: str, rule: Optional[str]) -> tuple[str, tuple]:
    """(` and <flags> like ?`, params) selecting rows whose flags may hold `rule`; none for None."""
    if rule is None:
        return "", ()
    return f" and cast({column} as varchar) like ?", (f"%{rule}%",)


class Gatherer:
    """Reads one project's warehouse; `gather(now)` returns the report's data."""

    def __init__(self, project: Project, query: Query, columns: Columns, exists: Callable[[str, str], bool],
                 relation: Callable[..., str], environment: Optional[str] = None):
        """`query`, `columns`, `exists` and `relation` (a dotted name, quoted) are a `runtime.warehouse.Reader`'s;
        `environment` is the SQLMesh environment read (None: prod)."""
        self.project, self.query, self.columns, self.exists = project, query, columns, exists
        self.environment = environment
        self._rel = relation
        self._memo = Memo()  # the facts the shared runtime readers ask once (runtime.warehouse.remember)
        self.silver, self.gold, self.meta = project.schema("silver"), project.schema("gold"), project.schema("meta")

    # ------------------------------------------------------------------ mart history
    def _history(self) -> dict[str, list[dict]]:
        if not self.exists(self.gold, "mart_data_quality"):
            return {}
        rows = self.query(
            "select entity, rule, disposition, rows_evaluated, rows_failed, rows_quarantined, rows_deduped, "
            f"run_id, run_started_at from {self._rel(self.gold, 'mart_data_quality')}", ())
        runs: dict[tuple[str, str], dict] = {}
        for entity, rule, disposition, evaluated, failed, quarantined, deduped, run_id, started in rows:
            run = runs.setdefault((entity, run_id), {"run_id": run_id, "run_started_at": _stamp(started), "rules": {}})
            if rule == "(entity)":
                evaluated, quarantined, deduped = int(evaluated or 0), int(quarantined or 0), int(deduped or 0)
                run.update(bronze=evaluated + deduped, evaluated=evaluated, kept=evaluated - quarantined,
                           quarantined=quarantined, deduped=deduped)
            else:
                run["rules"][rule] = {"disposition": disposition, "rows_failed": int(failed or 0)}
        history: dict[str, list[dict]] = {}
        for (entity, _), run in runs.items():
            if "bronze" in run:
                history.setdefault(entity, []).append(run)
        for entity in history:
            history[entity].sort(key=lambda r: (str(r["run_started_at"]), str(r["run_id"])))
        return history

    # ------------------------------------------------------------------ one entity
    def _published(self, e: Entity) -> Optional[str]:
        name = f"{e.name}__current" if e.scd == "type2" else e.name
        return self._rel(self.silver, name) if self.exists(self.silver, name) else None

    def _flagged(self, e: Entity) -> Optional[int]:
        table = self._published(e)
        if table is None or not e.opted_in:
            return None
        return int(self.query(f"select count(*) from {table} where not _quality_ok", ())[0][0])

    def _open_rejects(self, e: Entity, now: dt.datetime, unpublished: list[str]) -> dict:
        """Open reject rows by age; `unpublished`: the rows written by `unpublished`, the builds of
        the entity since its latest published one (see `unpublished_builds`), or None."""
        name = f"{e.name}__reject"
        if not e.has_reject or not self.exists(self.silver, name):
            return {"open": 0, "by_age": [], "retention": e.retention, "unpublished": None}
        rel = self._rel(self.silver, name)
        # Counted by the engine, never fetched: an entity's open rows can be millions (probe R6: the
        # report read 900,000 `last_seen` values twice). A row's age is its share of retention,
        # (now - last_seen) / retention, and share <= upper holds exactly when last_seen >= now -
        # retention * upper; so each bucket is the difference of two counts, NULL (no age) the youngest.
        span = e.retention.timedelta if e.retention is not None else None
        cutoffs = tuple(now - span * upper for _, upper in AGE_BUCKETS) if span is not None else ()
        within = "".join(f", count(case when r.last_seen is null or r.last_seen >= ? then 1 end)" for _ in cutoffs)
        opened, *younger = (int(n or 0) for n in self.query(
            f"select count(*){within} from {rel} as r where r.resolved_at is null", cutoffs)[0])
        buckets = [{"bucket": label, "rows": 0} for label, _ in AGE_BUCKETS] + [{"bucket": "past retention", "rows": 0}]
        in_bronze = 0
        if span is not None:
            for i, n in enumerate(younger + [opened]):
                buckets[i]["rows"] = n - (younger[i - 1] if i else 0)
            # the open rows past retention bronze still delivers, by retention's own test: maintain
            # keeps such a row (decision 0951), so the page must not say maintain deletes it. A
            # predicate in the WHERE clause: Spark takes an EXISTS subquery there and nowhere else.
            held, params = bronze_holds(self.project, e, self.exists, self._rel, "varchar")
            in_bronze = int(self.query(f"select count(*) from {rel} as r where r.resolved_at is null and r.last_seen < ? "
                                       f"and ({held})", (cutoffs[-1], *params))[0][0])
        return {"open": opened, "by_age": buckets, "retention": e.retention, "past_retention_in_bronze": in_bronze,
                "unpublished": self._unpublished_rejects(name, unpublished)}

    def _unpublished_rejects(self, name: str, runs: list[str]) -> Optional[dict]:
        """{runs, open, resolved}: the reject rows `runs` wrote last (`last_run_id`, decision 0944),
        builds whose entity was not published: open ones they diverted, and ones they resolved
        (SQLMesh resolves in the reject model, before the entity's checks decide). None when
        they wrote none, or the table predates the column."""
        rel = self._rel(self.silver, name)
        if not runs or "last_run_id" not in [c.lower() for c in self.columns(rel)]:
            return None
        marks = ", ".join("?" for _ in runs)
        counts: dict[bool, int] = {}
        wrote: set[str] = set()
        for run, is_open, n in self.query(f"select last_run_id, resolved_at is null, count(*) from {rel} "
                                          f"where last_run_id in ({marks}) group by 1, 2", tuple(runs)):
            counts[bool(is_open)] = counts.get(bool(is_open), 0) + int(n)
            wrote.add(str(run))
        if not counts:
            return None
        # only the builds that wrote rows are named: one that stopped before the reject model (a
        # parent's `fail` rule skipped it) judged none of them (an outside tester, session 38)
        return {"runs": [r for r in runs if r in wrote], "open": counts.get(True, 0), "resolved": counts.get(False, 0)}

    def _examples(self, e: Entity, rules: list[str]) -> dict[str, list[dict]]:
        """Up to three rows per rule: diverted rows from the reject table (raw is already redacted),
        kept rows from the entity (key columns and the rule's own column only).

        One scan of the newest EXAMPLE_SCAN rows serves most rules; a rule that fires only further
        down gets its own query (the flags cast to text and matched with LIKE, the same spelling on
        every engine, then checked exactly here), so no rule that fired is shown without an example."""
        out: dict[str, list[dict]] = {r: [] for r in rules}
        hidden = hidden_names(e)  # pii values are never on a page meant to be shared (privacy.py)
        reject = f"{e.name}__reject"
        if e.has_reject and self.exists(self.silver, reject):
            def from_reject(rule: Optional[str]) -> None:
                where, params = _rule_filter("failed_rules", rule)
                rows = self.query(
                    f"select _source_row_id, failed_rules, key_values, raw from {self._rel(self.silver, reject)} "
                    f"where resolved_at is null{where} order by last_seen desc, _source_row_id limit {EXAMPLE_SCAN}", params)
                for srid, failed, keys, raw in rows:
                    for r in _flags(failed):
                        if r in out and len(out[r]) < EXAMPLES_PER_RULE and (rule is None or r == rule):
                            out[r].append({"where": "reject", "source_row_id": srid, "key": _shown(_json(keys), hidden, e.redact),
                                           "raw": _clipped(_shown(_json(raw), hidden, e.redact))})
            self._fill(out, from_reject)
        table = self._published(e)
        if table is not None and e.opted_in:
            cols = self.columns(table)
            shown = [c for c in cols if c in e.key] + ["_source_row_id", "_quality_flags"] + (["_mapping"] if "_mapping" in cols else [])
            rules_by_name = {r.name: r for r in e.rules}
            extra = sorted({r.column for r in rules_by_name.values() if r.column and r.column in cols} - set(shown))
            select = ", ".join(self._rel(c) for c in shown + extra)

            def from_entity(rule: Optional[str]) -> None:
                where, params = _rule_filter("_quality_flags", rule)
                rows = self.query(f"select {select} from {table} where not _quality_ok{where} order by _source_row_id "
                                  f"limit {EXAMPLE_SCAN}", params)
                for row in rows:
                    rec = dict(zip(shown + extra, row))
                    for r in _flags(rec["_quality_flags"]):
                        if r in out and len(out[r]) < EXAMPLES_PER_RULE and (rule is None or r == rule):
                            out[r].append(self._flagged_example(e, rules_by_name.get(r), rec, hidden))
            self._fill(out, from_entity)
        return out

    @staticmethod
    def _fill(out: dict[str, list[dict]], read: Callable[[Optional[str]], None]) -> None:
        """`read(None)` (the newest rows), then `read(rule)` for each rule still without an example."""
        read(None)
        for rule in [r for r, found in out.items() if not found]:
            read(rule)

    def _flagged_example(self, e: Entity, rule, rec: dict, hidden: frozenset) -> dict:
        """One kept row a flag rule fired on: its key and the rule's column (the delivered key, for a
        referential rule), pii values hidden."""
        value = {rule.column: _plain(rec.get(rule.column))} if rule is not None and rule.column in rec else {}
        if rule is not None and rule.kind == "referential":
            value = self._delivered_key(e, rule, rec)
        return {"where": "entity (flagged)", "source_row_id": rec["_source_row_id"],
                "key": shown_values({k: _plain(rec[k]) for k in e.key if k in rec}, hidden),
                "raw": _clipped(shown_values(value, hidden))}

    def _delivered_key(self, e: Entity, rule, rec: dict) -> dict:
        """The foreign key a flagged referential row was delivered with, read from its bronze row (the
        entity may hold '__unknown__' in its place): the key that was missing."""
        from ..explain import delivered_foreign_key

        source = next((m.source for m in e.mappings if m.name == rec.get("_mapping")), None)
        if source is None or not self.exists(self.project.schema("bronze"), source):
            return {}
        rel = self._rel(self.project.schema("bronze"), source)
        cols = self.columns(rel)
        rows = self.query(f"select * from {rel} where cast(_source_row_id as varchar) = ?", (str(rec["_source_row_id"]),))
        bronze = {c: _plain(v) for c, v in zip(cols, rows[0])} if rows else {}
        return {column: value for column, (_, value) in delivered_foreign_key(e, rule, rec.get("_mapping"), bronze).items()}

    def _freshness(self, e: Entity, now: dt.datetime) -> list[dict]:
        staged = f"{e.name}__staged"
        out = []
        for m in e.mappings:
            if m.freshness_warn is None and m.freshness_error is None:
                continue
            newest = None
            if self.exists(self.silver, staged):
                newest = self.query(f"select max(_ingested_at) from {self._rel(self.silver, staged)} where _mapping = ?", (m.name,))[0][0]
            age = (now - newest) if newest is not None else None
            status = "no data"
            if age is not None:
                status = "pass"
                if m.freshness_warn and age > m.freshness_warn.timedelta:
                    status = "warn"
                if m.freshness_error and age > m.freshness_error.timedelta:
                    status = "error"
            out.append({"source": m.source, "newest_ingested_at": _stamp(newest),
                        "age_hours": round(age.total_seconds() / 3600, 1) if age is not None else None,
                        "warn_after": m.freshness_warn, "error_after": m.freshness_error, "status": status})
        return out

    # ------------------------------------------------------------------ checks
    def _checks(self) -> list[dict]:
        """The results of each table's latest recorded build (runtime/check_results.py), the checks
        that stopped or set back a table among them (decision 0941)."""
        from ..checks.recorded import verdict_of_row
        from ..runtime.check_results import CheckResults, outcome_of

        from ..runtime.check_results import AUDIT, moment, stopped_outcome
        from ..runtime.history_behind import mart_started
        from ..runtime.table_states import current_results

        recorded = CheckResults(self._reader(), self.meta, self.environment)
        when = recorded.latest_per_table()
        # The checks that stopped or set back a table (decision 0941) are results of their run, as
        # `assay checks` shows them: a later stopped build is the table's latest.
        elsewhere = recorded.elsewhere()
        stops = [x for x in recorded.stopped() if x["run"] not in elsewhere]
        for x in stops:
            if x["table"] not in when or moment(x["at"]) > moment(when[x["table"]][0]):
                when[x["table"]] = (x["at"], x["run"])
        # A build that began after the results (or the stop) and recorded no check result wrote the
        # quality history: an entity whose only check is a `fail` rule (probe 33, decision 0957),
        # or whose checks the spec no longer declares. Those results are no longer its latest
        # build's, and say nothing of the table now (table_states.current_results).
        when = current_results(when, mart_started(self.project, self._reader()))
        latest = {table: run for table, (_at, run) in when.items()}
        rows = recorded.rows(("run_id", "table_name", "check_id", "kind", "enforcement", "passed", "check_spec",
                              "measures", "recorded_at", "check_position"))
        out = []
        for x in stops:
            if latest.get(x["table"]) == x["run"]:
                outcome, on_failure = stopped_outcome(x["why"])
                out.append({"run_id": x["run"], "table": x["table"], "check_id": x["check_id"], "kind": AUDIT,
                            "enforcement": on_failure, "passed": False, "outcome": outcome, "detail": x["why"],
                            "recorded_at": _stamp(x["at"]), "position": -1})
        for r in rows:
            if latest.get(r[1]) != r[0]:
                continue
            try:
                detail = verdict_of_row(r[3], r[6], r[7]).detail
            except Exception:  # a SQL check file's result carries no measurements to render
                detail = None
            try:
                outcome = outcome_of(r[3], r[4], bool(r[5]), r[7])[0]
            except (TypeError, ValueError):
                outcome = "passed" if r[5] else "FAILED"
            out.append({"run_id": r[0], "table": r[1], "check_id": r[2], "kind": r[3], "enforcement": r[4],
                        "passed": bool(r[5]), "outcome": outcome, "detail": detail, "recorded_at": _stamp(r[8]),
                        "position": r[9]})
        out.sort(key=lambda c: (c["table"], c["position"] if c["position"] is not None else 0, c["check_id"]))
        return out

    # ------------------------------------------------------------------ all
    def _outcomes(self) -> dict[str, dict]:
        """{table: its latest build's state} (runtime/table_states.py) of every entity and every
        checked table the project only reads: the first thing the page says."""
        from ..runtime.table_states import table_states

        # each entity's latest build is timed by table_states from the mart and the runs' recorded
        # starts, as `assay table list` times it (decision 0957)
        return {s["table"]: s for s in table_states(self.project, self._reader(), every_entity=True,
                                                  environment=self.environment)}

    def _reader(self):
        """This gatherer's warehouse questions as a Reader-shaped object, for the shared runtime readers."""
        from types import SimpleNamespace

        return SimpleNamespace(query=lambda sql, params=(): self.query(sql, params), exists=self.exists, relation=self._rel,
                               remembered=self._memo)

    def gather(self, now: dt.datetime, *, explain_options: tuple[str, ...] = (), tool: Optional[dict] = None,
               anomalies: Optional[dict] = None) -> dict:
        """The report's data. `explain_options`: the report's own `--target` / `--environment`, repeated
        in each example's `assay explain` command; `tool`: the build tool's own outcomes
        (report/tool_results.py), judged in the health verdict; `anomalies`: the quality history's
        anomalies (anomalies/history.py::summary), an entity's latest anomalous run a warning."""
        from ..runtime.history_behind import histories_behind
        from ..runtime.table_states import failed_builds
        from .commands import explain_command
        from .health import health

        history = self._history()
        outcomes = self._outcomes()
        # whether a later build recorded no quality history (decision 0942), as `assay anomalies` tells it
        behind = histories_behind(self.project, self._reader(), self.environment,
                                  {name: (runs[-1]["run_id"], runs[-1]["run_started_at"])
                                   for name, runs in history.items() if runs}, outcomes)
        failed = failed_builds(self._reader(), self.meta)
        entities = []
        for e in self.project.entities:
            runs = history.get(e.name, [])
            latest = runs[-1] if runs else None
            ranked = sorted(((r, v) for r, v in (latest or {}).get("rules", {}).items() if v["rows_failed"] > 0),
                            key=lambda rv: (-rv[1]["rows_failed"], rv[0]))[:TOP_RULES]
            examples = self._examples(e, [r for r, _ in ranked])
            hidden = hidden_names(e)
            unpublished = unpublished_builds(outcomes.get(e.name), runs, failed.get(e.name, set()))
            for found in examples.values():
                for ex in found:
                    ex["explain"] = explain_command(e, ex, hidden, e.redact, explain_options)
            entities.append({
                "entity": e.name,
                "spec": _spec_of(e),
                "outcome": outcomes.get(e.name),
                "latest": None if latest is None else {k: latest[k] for k in RUN_FIELDS},
                "history_behind": behind.get(e.name),
                "flagged": self._flagged(e),
                "trend": [{k: r[k] for k in RUN_FIELDS} for r in runs],
                "rule_trend": _rule_trend(runs),
                "top_rules": [{"rule": r, "disposition": v["disposition"], "rows_failed": v["rows_failed"], "examples": examples.get(r, [])} for r, v in ranked],
                "unpublished_builds": unpublished,
                "rejects": self._open_rejects(e, now, unpublished),
                "freshness": self._freshness(e, now),
            })
        names = {e.name for e in self.project.entities}
        data = {"project": self.project.name, "generated_for": _stamp(now), "entities": entities,
                "tables": [o for t, o in sorted(outcomes.items()) if t not in names],
                "ranking": _ranking(entities), "checks": self._checks(), "tool": tool,
                "anomalies": anomalies or {"available": False, "flagged": [], "latest": {}, "thin": {}, "judged": 0}}
        data["health"] = health(data)
        return data


RUN_FIELDS = ("run_id", "run_started_at", "bronze", "kept", "quarantined", "deduped")


def unpublished_builds(outcome: Optional[dict], runs: list[dict], failed: set) -> list[str]:
    """The builds of an entity since it last published, newest first: its latest build when that did
    not publish (set back, not published), and the builds before it in its quality history that
    failed too, back to the first one that published (decision 0944). Each wrote its diversions to
    the reject table before its checks decided. Empty when the latest build published (a SQLMesh
    build evaluated in place published its rows, failing or not). A kept table (its mark stands
    over a later set-back, 002) counts the failed builds since the one that kept it the same way:
    the kept build published, those after it did not (an outside tester, session 48)."""
    if not outcome or not outcome.get("run"):
        return []
    if outcome.get("state") == "kept":
        out: list[str] = []
    elif outcome.get("state") in ("set_back", "not_published"):
        out = [outcome["run"]]
    else:
        return []
    for run in reversed(runs):
        if run["run_id"] in out:
            continue
        if run["run_id"] not in failed:
            break
        out.append(run["run_id"])
    return out


RANKED = 15  # rules in the ranking across entities


def _spec_of(e: Entity) -> dict:
    """What the spec says of the entity for a reader: owner, grain, description, key, history, and
    each field's type, classification and description (names and spec text, never data)."""
    return {"owner": e.owner, "grain": e.grain, "description": e.description, "key": list(e.key), "scd": e.scd,
            "materialized": e.materialized,
            "retention": None if e.retention is None else str(e.retention),
            "fields": [{"name": c.name, "type": c.type, "required": c.required, "classification": c.classification,
                        "description": c.description} for c in e.columns]}


def _rule_trend(runs: list[dict]) -> list[dict]:
    """Each rule that failed rows in any recorded run, with its rows_failed in every run (0 where
    the run recorded none), the rule failing most in the latest run first."""
    fired = sorted({r for run in runs for r, v in run["rules"].items() if v["rows_failed"] > 0})
    latest = runs[-1]["rules"] if runs else {}
    out = []
    for rule in fired:
        disposition = next((run["rules"][rule]["disposition"] for run in reversed(runs) if rule in run["rules"]), None)
        out.append({"rule": rule, "disposition": disposition,
                    "runs": [{"run_id": run["run_id"], "run_started_at": run["run_started_at"],
                              "rows_failed": run["rules"].get(rule, {}).get("rows_failed", 0)} for run in runs]})
    out.sort(key=lambda t: (-latest.get(t["rule"], {}).get("rows_failed", 0), t["rule"]))
    return out


def _ranking(entities: list[dict]) -> list[dict]:
    """The rules that failed most rows in each entity's latest run, across entities, with the share
    of that run's bronze rows."""
    rows = []
    for e in entities:
        latest = e["latest"]
        for t in e["rule_trend"]:
            failed = t["runs"][-1]["rows_failed"] if t["runs"] else 0
            if latest is None or failed <= 0 or t["runs"][-1]["run_id"] != latest["run_id"]:
                continue
            rows.append({"entity": e["entity"], "rule": t["rule"], "disposition": t["disposition"], "rows_failed": failed,
                         "bronze": latest["bronze"], "run_started_at": latest["run_started_at"],
                         "share": round(failed / latest["bronze"], 4) if latest["bronze"] else None})
    rows.sort(key=lambda r: (-r["rows_failed"], -(r["share"] or 0), r["entity"], r["rule"]))
    return rows[:RANKED]
