"""`assay report` as one self-contained HTML page: inline CSS, inline SVG charts (report/charts.py),
no script, no network. Every value is escaped; the page is a pure function of the gathered data.

Order, as a data lead reads it: the health verdict (one sentence, then one line per entity, worst
first), the summary whose columns add up (bronze = kept + quarantined + deduped; flagged rows are
kept rows), the rules that fail most rows across entities, the checks and the build tool's own
tests, then one card per entity in a grid (spec metadata, rows per run, each rule's trend, examples
with their `assay explain` command, open rejects, freshness)."""

from __future__ import annotations

import html
import json
from typing import Any, Optional

from .charts import age_svg, composition_svg, legend, rule_svg, run_date, runs_svg
from .health import past_retention, unpublished_rejects

CSS = """
*{box-sizing:border-box}
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:20px auto;padding:0 20px;color:#212121;max-width:1500px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:24px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:14px;margin:14px 0 6px} .muted{color:#757575;font-size:12px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px} th,td{border:1px solid #e0e0e0;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#fafafa} td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass,.ok{color:#2e7d32;font-weight:600} .warn{color:#ef6c00;font-weight:600} .fail{color:#c62828;font-weight:600}
.legend span{display:inline-block;margin-right:12px;font-size:12px} .legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
code{font-size:12px;background:#f5f5f5;padding:1px 3px;word-break:break-all}
code.cmd{display:block;user-select:all;background:#263238;color:#eceff1;padding:4px 6px;margin:2px 0 6px;border-radius:3px}
.verdict{border:1px solid #e0e0e0;border-left:6px solid #2e7d32;padding:8px 14px;margin:12px 0;background:#fcfcfc}
.verdict.fail{border-left-color:#c62828} .verdict.warn{border-left-color:#ef6c00}
.verdict p.sentence{font-size:16px;margin:4px 0 8px;color:#212121;font-weight:600}
.verdict ul{margin:0;padding-left:0;list-style:none} .verdict li{margin:3px 0;font-weight:400;color:#212121}
.verdict li ul{padding-left:22px;font-size:13px;color:#424242;list-style:disc}
.lvl{display:inline-block;min-width:52px;text-align:center;font-size:11px;border-radius:3px;padding:1px 4px;margin-right:6px;color:#fff}
.lvl.fail{background:#c62828} .lvl.warn{background:#ef6c00} .lvl.ok{background:#2e7d32}
.row2>div{min-width:0} @media (min-width:1400px){.row2{display:grid;grid-template-columns:1fr 1fr;gap:20px}}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:18px}
.card{border:1px solid #e0e0e0;border-radius:6px;padding:4px 12px 10px;min-width:0;overflow-x:auto;break-inside:avoid}
.card table{width:100%} td .sub{display:block;color:#757575;font-size:11px}
.card h2{border:none;margin-top:8px} .meta{font-size:13px;margin:2px 0} .meta b{font-weight:600}
.chart{max-width:560px}
@media print{body{margin:0;max-width:none}.cards{grid-template-columns:1fr}.card,.verdict,table{break-inside:avoid}
code.cmd{background:#fff;color:#000;border:1px solid #999}}
"""



def _share(share) -> str:
    """A rule's share of the rows, to one decimal; a share that rounds to nothing but is not
    nothing reads `<0.1%` (1 of 15,198 read `0.0%`: an outside tester, session 45)."""
    if share is None:
        return ""
    return "<0.1%" if 0 < share < 0.0005 else f"{share * 100:.1f}%"

def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


class _Raw(str):
    """Markup built here (already escaped), placed in a cell as it is."""


def _table(headers: list[str], rows: list[list[Any]], numeric: set[int] = frozenset(), cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{v if isinstance(v, _Raw) else _e(v)}</td>' if i in numeric
                         else f"<td>{v if isinstance(v, _Raw) else _e(v)}</td>" for i, v in enumerate(r)) + "</tr>"
        for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _when(stamp: Any) -> str:
    day, time = run_date(stamp)
    return f"{day} {time}".strip()


def kept_cell(kept: Any, flagged: Optional[int]) -> str:
    """Kept rows with the flagged ones among them: `5 (3 flagged)`; flagged is n/a for an entity
    outside the quality system."""
    if kept is None or kept == "":
        return ""
    if isinstance(flagged, int) and isinstance(kept, int) and flagged > kept:
        # The published table holds earlier runs' rows too (an incremental entity): its flagged
        # rows are not a part of this run's kept rows, and the page must not pretend they are.
        return f"{kept} (the published table holds {flagged} flagged rows, of this and earlier runs)"
    return f"{kept} ({'n/a' if flagged is None else flagged} flagged)"


# ---------------------------------------------------------------------- verdict
def _verdict(health: dict) -> str:
    lines = health["lines"]
    worst = next((l["level"] for l in lines if l["level"] != "ok"), "ok")
    items = []
    for l in lines:
        # The headline is the state's own sentence (`order: set back by the latest build ...`), the
        # words `assay table list` prints, so the page and the terminal say the same.
        head, rest = l["headline"], l["reasons"]
        when = (f" · since {_when(l['since'])}" if l.get("since") else "") \
            + (f" · counts of the run of {_when(l['run_started_at'])}" if l.get("run_started_at") else "") \
            + (f" · checks{' of run ' + l['checks_run'] + ':' if l.get('checks_run') else ''} "
               f"{l.get('checks_tally') or str(l['checks_passed']) + ' of ' + str(l['checks']) + ' passed'}"
               if l.get("checks") else "") \
            + (f" · freshness {l['freshness']}" if l.get("freshness") else "")
        sub = ("<ul>" + "".join(f"<li>{_e(r)}</li>" for r in rest) + "</ul>") if rest else ""
        label = {"fail": "attention", "warn": "warning", "ok": "healthy"}[l["level"]]
        items.append(f'<li class="health-line"><span class="lvl {l["level"]}">{label}</span>'
                     f'{_e(head)}<span class="muted">{_e(when)}</span>{sub}</li>')
    return (f'<div class="verdict {worst}" id="health"><p class="sentence">{_e(health["sentence"])}</p>'
            f'<ul>{"".join(items)}</ul></div>')


# ---------------------------------------------------------------------- summary, ranking, checks
def _summary(entities: list[dict]) -> str:
    rows = []
    for e in entities:
        latest = e["latest"]
        if latest is None:
            rows.append([e["entity"], "", "", "", "", e["rejects"]["open"], "not built yet", ""])
            continue
        when = _when(latest["run_started_at"]) + _earlier(e)
        rows.append([e["entity"], latest["bronze"], _kept(e), latest["quarantined"],
                     latest["deduped"], _open_cell(e["rejects"]), when,
                     _Raw(composition_svg(latest, e["flagged"]))])
    note = ('<p class="muted">Latest run of each entity. bronze = kept + quarantined + deduped; flagged rows are kept '
            "rows a flag rule fired on (published, with <code>_quality_ok = false</code>), counted in the published table."
            + (" For an incremental entity bronze counts the deliveries its ledger holds: a bronze row deleted after it "
               "was built stays counted." if any(e.get("spec", {}).get("materialized") == "incremental" for e in entities) else "")
            + "</p>")
    return note + _table(["entity", "bronze", "kept", "quarantined", "deduped", "open rejects", "latest run (UTC)", ""],
                         rows, numeric={1, 2, 3, 4, 5}, cls="summary") + legend(("kept", "flagged", "quarantined", "deduped"))


def _kept(e: dict) -> str:
    """The latest run's kept cell; a run whose entity was not published kept rows no reader sees,
    and the published table's flagged rows are another build's (decision 0944)."""
    latest = e["latest"]
    if latest["run_id"] in e.get("unpublished_builds", []):
        return f"{latest['kept']} (not published)"
    return kept_cell(latest["kept"], e["flagged"])


def _open_cell(rej: dict) -> str:
    """Open reject rows, those of builds whose entity was not published among them: `21 (20 not published)`."""
    n = (rej.get("unpublished") or {}).get("open")
    return f"{rej['open']} ({n} not published)" if n else rej["open"]


def _earlier(e: dict) -> str:
    """` (a build that was not published)` when the counts shown are of a build whose entity was not
    published (decision 0944); ` (before the set back build of ...)` when the latest build did not
    publish and recorded no counts in the mart; ` (older than its latest build, run ...)` when a later build recorded none
    (decision 0942): the counts shown are an earlier run's, and the page says so."""
    outcome, latest = e.get("outcome") or {}, e.get("latest") or {}
    if latest.get("run_id") in e.get("unpublished_builds", []):
        return " (a build that was not published)"
    # a kept build published its rows and recorded its counts: the runs after it are the kept
    # table's own, or failed builds `unpublished_builds` names
    if outcome.get("state") in ("set_back", "not_published") and outcome.get("run") not in (None, latest.get("run_id")):
        return f" (before the {outcome['state'].replace('_', ' ')} build of {_when(outcome.get('since'))})"
    behind = e.get("history_behind")
    if behind and behind.get("failed_on"):  # SQLMesh: the environment's latest run failed (decision 0942)
        return (f" (older than the latest run, {behind['run']} of {_when(behind['at'])}, which failed on "
                f"{behind['failed_on']} and recorded none)")
    if behind:  # a later build recorded no quality history (decision 0942)
        return f" (older than its latest build, run {behind['run']} of {_when(behind['at'])}, which recorded none)"
    return ""


def _ranking(ranking: list[dict]) -> str:
    if not ranking:
        return '<p class="muted">No rule failed a row in any entity\'s latest run.</p>'
    return _table(["#", "entity", "rule", "disposition", "rows failed", "of bronze", "run (UTC)"],
                  [[i + 1, r["entity"], r["rule"], r["disposition"], r["rows_failed"],
                    _share(r["share"]), _when(r["run_started_at"])]
                   for i, r in enumerate(ranking)], numeric={0, 4, 5}, cls="ranking")


def _anomalies(anomalies: dict) -> str:
    """The runs that left the band learnt from earlier clean runs (docs/anomalies.md), oldest first."""
    head = ('<p class="muted">Each run\'s volume (bronze rows loaded since the run before), quarantine rate and '
            "each rule's failure rate, against the band (median and robust spread) learnt from earlier runs that were "
            "neither anomalous nor failed, per weekday once six weeks exist; <code>assay anomalies</code> lists the "
            "same.</p>")
    if not anomalies.get("available"):
        return head + '<p class="muted">No quality history yet.</p>'
    thin = "".join(f'<p class="muted">{_e(entity)}: not enough history ({runs} run{"" if runs == 1 else "s"} '
                   "recorded; a run is judged once 7 earlier runs can be learnt from).</p>"
                   for entity, runs in sorted(anomalies.get("thin", {}).items()))
    thin += "".join(f'<p class="muted">{_e(line)}.</p>' for line in anomalies.get("waiting", []))
    flagged = anomalies.get("flagged", [])
    if not flagged:
        return head + thin + f'<p class="muted">No run left its band ({anomalies.get("judged", 0)} measures of runs judged).</p>'
    rows = [[r["entity"], r["label"], _when(r["run_started_at"]), r["observed_text"], r["band_text"], r["learnt_text"],
             r["direction"] + (" (failed run)" if r["failed_run"] else "") + (" · latest" if r["latest"] else "")]
            for r in flagged]
    return head + thin + _table(["entity", "measure", "run (UTC)", "observed", "band", "learnt from", "direction"], rows,
                                numeric={3}, cls="anomalies")


def _outcome_cell(outcome: str) -> _Raw:
    cls = "pass" if outcome == "passed" else "warn" if outcome in ("warned", "not_evaluated", "warn", "skipped") else \
        "pass" if outcome in ("pass", "success") else "fail"
    return _Raw(f'<span class="{cls}">{_e(outcome)}</span>')


def _checks(checks: list[dict]) -> str:
    if not checks:
        return '<p class="muted">No declared check has recorded a result.</p>'
    # The recorded sentence is rendered as it is, so a new kind of check shows without a change here.
    return _table(["table", "check", "kind", "enforcement", "result", "detail", "recorded (UTC)"],
                  [[c["table"], c["check_id"], c["kind"], c["enforcement"], _outcome_cell(c.get("outcome") or ("passed" if c["passed"] else "FAILED")),
                    c["detail"], _when(c["recorded_at"])] for c in checks], cls="checks")


def _tool(tool: Optional[dict]) -> str:
    if not tool:
        return ""
    if tool["tool"] == "sqlmesh":
        return f'<h3>SQLMesh\'s own audits</h3><p class="muted">{_e(tool["note"])}</p>'
    out = ["<h3>dbt's own tests</h3>"]
    inv = tool.get("invocation")
    if inv:
        out.append(f'<p class="muted">target/run_results.json: dbt {_e(inv["command"])} (invocation {_e(inv["invocation_id"])}) '
                   f'at {_e(_when(inv["generated_at"]))} UTC, dbt {_e(inv["dbt_version"])}</p>')
    if tool.get("note"):
        out.append(f'<p class="muted">{_e(tool["note"])}</p>')
    if tool["results"]:
        out.append(_table(["entity", "dbt node", "kind", "status", "failures", "message", "on"],
                          [[t["entity"] or "", t["name"], t["kind"], _outcome_cell(t["status"]), t["failures"], t["message"], t["attached"]]
                           for t in tool["results"]], numeric={4}, cls="dbt-tests"))
    elif inv:
        out.append('<p class="muted">That invocation ran no test, and every node it ran succeeded.</p>')
    if tool.get("freshness"):
        out.append("<h3>dbt source freshness</h3>" + _table(
            ["source", "entity", "status", "newest loaded", "checked at"],
            [[f["source"], f["entity"] or "", _outcome_cell(f["status"]), _when(f["max_loaded_at"]), _when(f["snapshotted_at"])]
             for f in tool["freshness"]], cls="dbt-freshness"))
    return "".join(out)


# ---------------------------------------------------------------------- one entity card
def _spec(spec: dict) -> str:
    meta = [f'<p class="meta"><b>owner</b> {_e(spec["owner"] or "not declared")} · <b>grain</b> {_e(spec["grain"])} · '
            f'<b>key</b> {_e(", ".join(spec["key"]))} · <b>history</b> {_e(spec["scd"])}'
            + (f' · <b>reject retention</b> {_e(spec["retention"])}' if spec.get("retention") else "") + "</p>"]
    if spec.get("description"):
        meta.append(f'<p class="meta">{_e(spec["description"])}</p>')
    meta.append(_table(["field", "type", "classification", "description"],
                       [[f["name"] + (" (required)" if f["required"] else ""), f["type"], f["classification"] or "", f["description"] or ""]
                        for f in spec["fields"]], cls="fields"))
    return "".join(meta)


def _examples(examples: list[dict]) -> _Raw:
    if not examples:
        return _Raw('<span class="muted">none open</span>')
    items = []
    for ex in examples:
        cmd = ex.get("explain") or {}
        line = (f'<code class="cmd" title="assay explain: run it in the project directory">{_e(cmd["command"])}</code>'
                if cmd.get("command") else "")
        note = f'<div class="muted">{_e(cmd["note"])}</div>' if cmd.get("note") else ""
        items.append(f"<div>{_e(ex['where'])} <code>{_e(ex['source_row_id'])}</code> key <code>{_e(json.dumps(ex['key'], sort_keys=True))}</code>"
                     f" <code>{_e(json.dumps(ex['raw'], sort_keys=True, default=str))}</code>{note}{line}</div>")
    return _Raw("".join(items))


def _rule_trends(trends: list[dict]) -> str:
    if not trends:
        return '<p class="muted">No rule has failed a row in any recorded run.</p>'
    return _table(["rule", "latest", "rows failed per run"],
                  [[_Raw(f'{_e(t["rule"])}<span class="sub">{_e(t["disposition"])}</span>'), t["runs"][-1]["rows_failed"] if t["runs"] else 0,
                    _Raw(rule_svg(t["runs"][-60:]))] for t in trends], numeric={1}, cls="rule-trend")


def _entity(e: dict, level: str) -> str:
    label = {"fail": "attention", "warn": "warning", "ok": "healthy"}.get(level, "")
    out = [f'<section class="card" id="entity-{_e(e["entity"])}"><h2><span class="lvl {level}">{label}</span>{_e(e["entity"])}</h2>']
    out.append(_spec(e["spec"]))
    latest = e["latest"]
    if latest is None:
        outcome = e.get("outcome") or {}
        if outcome.get("state") == "not_published" and outcome.get("run"):
            # built, but not published: nor is the mart its build wrote (decision 1122)
            out.append('<p class="muted">No published run of this entity is in mart_data_quality: its latest build '
                       'was not published (its state is at the top).</p>')
        else:
            out.append('<p class="muted">Not built yet: no run of this entity is in mart_data_quality.</p>')
    else:
        out.append(f'<p class="meta">latest run {_e(latest["run_id"])} at {_e(_when(latest["run_started_at"]))} UTC{_e(_earlier(e))}: '
                   f'bronze {latest["bronze"]} = kept {_e(_kept(e))} + quarantined '
                   f'{latest["quarantined"]} + deduped {latest["deduped"]}</p>')
    out.append(f"<h3>Rows per run ({len(e['trend'])})</h3>" + runs_svg(e["trend"][-60:]))
    out.append("<h3>Each rule's failed rows per run</h3>" + _rule_trends(e.get("rule_trend", [])))
    out.append("<h3>Rules that fire most (latest run), with examples</h3>")
    if e["top_rules"]:
        out.append(_table(["rule", "disposition", "rows", "examples"],
                          [[r["rule"], r["disposition"], r["rows_failed"], _examples(r["examples"])] for r in e["top_rules"]],
                          numeric={2}, cls="top-rules"))
    else:
        out.append('<p class="muted">No rule fired in the latest run.</p>')
    rej = e["rejects"]
    out.append(f"<h3>Open reject rows: {rej['open']}</h3>")
    out.extend(f'<p class="warn">{_e(said)}.</p>' for said in unpublished_rejects(rej.get("unpublished")))
    if rej["open"]:
        out.append(f'<p class="muted">age since last seen, against retention {_e(rej["retention"])} (assay maintain deletes '
                   f'rows past it whose delivery bronze no longer holds)</p>')
        out.append(age_svg(rej["by_age"]))
        out.extend(f'<p class="muted">{_e(said)}.</p>' for said in past_retention(rej))
    if e["freshness"]:
        out.append("<h3>Freshness</h3>")
        out.append(_table(["source", "newest _ingested_at", "age (hours)", "warn after", "error after", "status"],
                          [[f["source"], _when(f["newest_ingested_at"]), f["age_hours"], f["warn_after"], f["error_after"],
                            _Raw(f'<span class="{ {"pass": "pass", "warn": "warn", "error": "fail"}.get(f["status"], "muted") }">{_e(f["status"])}</span>')]
                           for f in e["freshness"]], numeric={2}))
    out.append("</section>")
    return "".join(out)


def render(data: dict) -> str:
    """The whole page."""
    from .health import health as judge

    health = data.get("health") or judge(data)
    entities = data["entities"]
    levels = {l["entity"]: l["level"] for l in health["lines"]}
    order = {l["entity"]: i for i, l in enumerate(health["lines"])}
    entities = sorted(entities, key=lambda e: order.get(e["entity"], len(order)))  # the cards worst first, as the verdict
    nav = " · ".join(f'<a href="#entity-{_e(e["entity"])}">{_e(e["entity"])}</a>' for e in entities)
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>assay report: {_e(data['project'])}</title><style>{CSS}</style></head><body>"
        f"<h1>assay report: {_e(data['project'])}</h1>"
        f'<p class="muted">as of {_e(data["generated_for"])} · times are UTC · commands run in the project directory · {nav}</p>'
        + _verdict(health)
        + f"<h2>Latest run of each entity</h2>{_summary(data['entities'])}"
        + '<div class="row2"><div><h2>Rules that fail most rows, across entities (latest runs)</h2>'
        + _ranking(data.get("ranking", []))
        + "</div><div><h2>Checks and tests</h2><h3>Table checks (latest run per table)</h3>"
        + _checks(data["checks"]) + _tool(data.get("tool")) + "</div></div>"
        + "<h2>Anomalies in the quality history</h2>" + _anomalies(data.get("anomalies") or {})
        + '<div class="cards">' + "".join(_entity(e, levels.get(e["entity"], "ok")) for e in entities) + "</div>"
        + "</body></html>\n"
    )
