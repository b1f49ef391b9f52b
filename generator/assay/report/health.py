"""The report's health verdict (issue 19; decision 0990): one line per entity (and per table assay
only reads that has checks), worst first, and one sentence for the whole warehouse.

A pure function of the gathered data, so `--json` carries the same verdict the page shows. An
entity needs attention (`fail`) when its latest build did not publish (set back, not published,
kept), a check of its latest build failed or errored, a mapping's freshness is past `error_after`,
or dbt's own test on it failed or errored; it has warnings (`warn`) when it was never built, a
check warned or was not evaluated, freshness is past `warn_after` or has no data, a dbt test
warned, its latest run is anomalous (docs/anomalies.md), open reject rows are past retention, or the reject
table holds rows of a build whose entity was not published (decision 0944). Otherwise it is `ok`.
"""

from __future__ import annotations

from typing import Any

from ..runtime.check_results import did_pass, tally
from ..runtime.history_behind import behind_sentence

LEVELS = ("fail", "warn", "ok")
FAILED_CHECK = ("FAILED", "failed (kept)", "errored")
WARNED_CHECK = ("warned", "not_evaluated")
FRESHNESS = ("error", "no data", "warn", "pass")  # worst first
STATE_WORDS = {"published": "published", "set_back": "set back", "not_published": "not published", "kept": "kept",
               "published_failing": "published with failing rows"}


def _state_reason(outcome: dict) -> str | None:
    from ..runtime.table_sentences import line

    if outcome is None or outcome["state"] == "published":
        return None
    if outcome["state"] == "not_published" and outcome.get("run") is None and outcome.get("built_by_project", True):
        return None  # never built: said by the line's own `never built` reason below
    return line(outcome).split(": ", 1)[1]


def unpublished_rejects(unpublished: dict | None) -> list[str]:
    """What the reject table holds of builds whose entity was not published (decision 0944), in
    sentences: the open rows they diverted, and the rows they resolved (SQLMesh's reject model
    resolves before the entity's checks decide)."""
    if not unpublished:
        return []
    runs = unpublished["runs"]
    by = (f"run {runs[0]}, a build whose entity was not published" if len(runs) == 1
          else f"runs {', '.join(runs)}, builds whose entity was not published")
    said = []
    if unpublished["open"]:
        n = unpublished["open"]
        # `last_run_id` names the build that judged a row last: a row an earlier, published build
        # diverted too is re-stamped by the set-back one, so which of them the published version
        # holds diverted is not known (an outside tester, session 36): only the order is claimed.
        said.append(f"{n} open reject {'row was' if n == 1 else 'rows were'} last judged by {by}; the published "
                    "version of the entity was built before that judgement, and the next build that publishes judges "
                    f"{'it' if n == 1 else 'them'} again")
    if unpublished["resolved"]:
        n = unpublished["resolved"]
        said.append(f"{n} reject {'row was' if n == 1 else 'rows were'} resolved by {by}: the published table does "
                    f"not hold what {'it' if len(runs) == 1 else 'they'} admitted until a build publishes it")
    return said


def _checks_of(checks: list[dict], table: str) -> tuple[list[str], list[str]]:
    fails, warns = [], []
    for c in checks:
        if c["table"] != table or c.get("outcome") in (None, "passed"):
            continue
        word = c["outcome"].lower()
        # An errored check's detail already opens with `errored: ` (decision 0511): say it once.
        detail = (c.get("detail") or "").removeprefix(f"{word}: ")
        said = f"check {c['check_id']} {word}" + (f": {detail}" if detail else "")
        (fails if c["outcome"] in FAILED_CHECK else warns if c["outcome"] in WARNED_CHECK else fails).append(said)
    return fails, warns


def _tool_of(tool: dict, entity: str) -> tuple[list[str], list[str]]:
    fails, warns = [], []
    for t in (tool or {}).get("results", []):
        if t.get("entity") != entity:
            continue
        said = f"dbt {t['kind']} {t['name']}: {t['status']}" + (f" ({t['message']})" if t.get("message") else "")
        if t["status"] in ("fail", "error"):
            fails.append(said)
        elif t["status"] in ("warn", "skipped"):
            warns.append(said)
    return fails, warns


def _entity_line(e: dict, checks: list[dict], tool: dict, anomalies: dict | None = None) -> dict[str, Any]:
    fails, warns = [], []
    state = _state_reason(e.get("outcome"))
    latest = e.get("latest") or {}
    if not latest and state is None:
        warns.append("never built: no run of it is in mart_data_quality")
    behind = e.get("history_behind")
    if latest and behind and state is None:
        # its latest build recorded no quality history: the counts shown are older (decision 0942),
        # said as `assay anomalies` says it
        warns.append(behind_sentence(behind, latest.get("run_id")))
    f, w = _checks_of(checks, e["entity"])
    fails += f
    warns += w
    for fresh in e.get("freshness", []):
        age = f"{fresh['age_hours']} h old" if fresh.get("age_hours") is not None else "no row staged"
        if fresh["status"] == "error":
            fails.append(f"freshness error: {fresh['source']} {age} (error after {fresh['error_after']})")
        elif fresh["status"] in ("warn", "no data"):
            warns.append(f"freshness {fresh['status']}: {fresh['source']} {age}"
                         + (f" (warn after {fresh['warn_after']})" if fresh["status"] == "warn" else ""))
    f, w = _tool_of(tool, e["entity"])
    fails += f
    warns += w
    for said in (anomalies or {}).get("latest", {}).get(e["entity"], []):
        warns.append(f"latest run anomalous: {said}")
    warns += unpublished_rejects(e.get("rejects", {}).get("unpublished"))
    warns += past_retention(e.get("rejects", {}))
    outcome = e.get("outcome") or {}
    statuses = [f["status"] for f in e.get("freshness", [])]
    mine = [c for c in checks if c["table"] == e["entity"]]
    return {**_line(e["entity"], "entity", outcome.get("state", "published" if latest else "not_published"), state, fails, warns,
                 latest.get("run_id"), latest.get("run_started_at")),
            "since": outcome.get("since") if outcome.get("state") != "published" else None, "short": _short(outcome),
            "freshness": next((w for w in FRESHNESS if w in statuses), None),
            # counted as `assay checks` counts (decision 1120): an advisory check that failed did not pass
            "checks_passed": sum(1 for c in mine if did_pass(c)), "checks": len(mine), "checks_tally": tally(mine),
            # the run the checks are of, when it is not the build the headline names (a child that
            # a later build skipped keeps the results of its last build that ran them)
            "checks_run": mine[0].get("run_id") if mine and outcome.get("run") and mine[0].get("run_id") != outcome.get("run")
            else None}


def _line(name: str, kind: str, state: str, said: str | None, fails: list[str], warns: list[str],
          run_id: str | None = None, started: str | None = None) -> dict[str, Any]:
    """One verdict line: the headline is the table's state as `assay table list` says it, the
    reasons are what else needs attention, failures first."""
    if said is None and not fails and not warns:
        said = "published" if state == "published" else STATE_WORDS.get(state, state)
    headline = f"{name}: {said}" if said else f"{name}: {STATE_WORDS.get(state, state)}" + (" (never built)" if state == "not_published" else "")
    level = "fail" if fails or (said and state != "published") else "warn" if warns else "ok"
    return {"entity": name, "kind": kind, "level": level, "state": state, "headline": headline,
            "run_id": run_id, "run_started_at": started, "reasons": fails + warns, "since": None, "short": None}


def _short(outcome: dict) -> str | None:
    """The state in a few words for the warehouse's sentence: `set back by the latest build, check X
    did not pass`."""
    if outcome and outcome.get("upstream") and outcome["state"] in ("set_back", "not_published"):
        # dbt skipped it because an entity it reads was not written (decision 0940)
        where = " by the latest build" if outcome["state"] == "set_back" else ""
        return f"{STATE_WORDS[outcome['state']]}{where}, not written because upstream {outcome['upstream']} failed"
    if not outcome or outcome["state"] == "published" or outcome.get("check") is None:
        return None
    if outcome.get("failed_table"):  # the SQLMesh plan failed on another table (decision 1122)
        return f"not published, the plan failed on {outcome['failed_table']}"
    failed = "failed" if outcome["state"] == "kept" else "did not pass"
    where = " by the latest build" if outcome["state"] == "set_back" else ""
    return f"{STATE_WORDS.get(outcome['state'], outcome['state'])}{where}, check {outcome['check']} {failed}"


def _table_line(outcome: dict, checks: list[dict]) -> dict[str, Any]:
    from ..runtime.table_sentences import line

    fails, warns = _checks_of(checks, outcome["table"])
    if outcome["state"] == "not_published":
        fails.insert(0, "the table does not exist")
    return _line(outcome["table"], "table", outcome["state"], line(outcome).split(": ", 1)[1], fails, warns)


def health(data: dict) -> dict[str, Any]:
    """{"sentence": one sentence for the warehouse, "lines": one per entity and checked table,
    worst first ({entity, kind, level, state, headline, since, short, run_id, run_started_at,
    reasons, and for an entity freshness, checks, checks_passed, checks_tally, checks_run})}."""
    checks, tool = data.get("checks", []), data.get("tool") or {}
    lines = [_entity_line(e, checks, tool, data.get("anomalies")) for e in data["entities"]]
    lines += [_table_line(t, checks) for t in data.get("tables", [])]
    lines.sort(key=lambda l: (LEVELS.index(l["level"]), l["kind"] != "entity", l["entity"]))
    n = len(lines)
    bad = [l for l in lines if l["level"] != "ok"]
    one, many = ("entity", "entities") if all(l["kind"] == "entity" for l in lines) else ("table", "tables")
    if not n:
        sentence = "The spec declares no entity."
    elif not bad:
        # the freshness clause only where some mapping declares one (an outside tester read "every
        # declared source is fresh" of a spec that declares none, session 45)
        fresh = ", every declared source is fresh" if any(e.get("freshness") for e in data["entities"]) else ""
        sentence = (f"All {n} {one + ' is' if n == 1 else many + ' are'} healthy: every latest build published"
                    f"{',' if fresh else ' and'} no check failed{fresh}.")
    else:
        fails = sum(1 for l in bad if l["level"] == "fail")
        parts = [f"{l['entity']} ({l['short'] or (l['headline'].split(': ', 1)[1] if l['state'] != 'published' else l['reasons'][0])})"
                 for l in bad[:3]]
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        sentence = (f"{len(bad)} of {n} {one if n == 1 else many} {'needs' if len(bad) == 1 else 'need'} attention "
                    f"({fails} failing, {len(bad) - fails} with warnings): " + "; ".join(parts) + more + ".")
    return {"sentence": sentence, "lines": lines}


def past_retention(rejects: dict) -> list[str]:
    """The sentences on open reject rows past retention, split as `assay maintain` splits them:
    the ones it deletes, and the ones it keeps because bronze still holds their delivery (0951)."""
    past = next((b["rows"] for b in rejects.get("by_age", []) if b["bucket"] == "past retention"), 0)
    kept = rejects.get("past_retention_in_bronze", 0)
    said = []
    if past - kept:
        n = past - kept
        said.append(f"{n} open reject {'row' if n == 1 else 'rows'} past retention (assay maintain deletes {'it' if n == 1 else 'them'})")
    if kept:
        said.append(f"{kept} open reject {'row' if kept == 1 else 'rows'} past retention that assay maintain keeps: "
                    f"bronze still holds {'its' if kept == 1 else 'their'} delivery (decision 0951)")
    return said
