"""`assay report` as one self-contained HTML page: inline CSS, inline SVG charts, no script, no
network. Every value is escaped; the page is a pure function of the gathered data."""

from __future__ import annotations

import html
import json
from typing import Any

from ..runtime.table_states import line

COLORS = {"kept": "#2e7d32", "quarantined": "#c62828", "deduped": "#9e9e9e", "flagged": "#f9a825"}

CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#212121;max-width:1100px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:16px 0 6px} .muted{color:#757575;font-size:13px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px} th,td{border:1px solid #e0e0e0;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#fafafa} td.n{text-align:right;font-variant-numeric:tabular-nums}
.pass{color:#2e7d32;font-weight:600} .warn{color:#ef6c00;font-weight:600} .fail{color:#c62828;font-weight:600}
.legend span{display:inline-block;margin-right:12px;font-size:12px} .legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
code{font-size:12px;background:#f5f5f5;padding:1px 3px}
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _table(headers: list[str], rows: list[list[Any]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td class="n">{_e(v)}</td>' if i in numeric else f"<td>{v if isinstance(v, _Raw) else _e(v)}</td>"
                         for i, v in enumerate(r)) + "</tr>"
        for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Raw(str):
    """Markup built here (already escaped), placed in a cell as it is."""


def trend_svg(trend: list[dict], width: int = 640, height: int = 160) -> str:
    """Stacked bars per run (kept, quarantined, deduped) with the run's bronze count on hover."""
    if not trend:
        return '<p class="muted">No run has been recorded in mart_data_quality yet.</p>'
    if not any(r["bronze"] for r in trend):
        return f'<p class="muted">{len(trend)} {"run" if len(trend) == 1 else "runs"} recorded, none with a bronze row.</p>'
    top = max(r["bronze"] for r in trend)
    pad, n = 30, len(trend)
    slot = (width - pad - 10) / n
    bar = max(min(slot * 0.7, 40), 2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20}" role="img" '
             f'aria-label="rows per run: kept, quarantined, deduped">',
             f'<line x1="{pad}" y1="{height}" x2="{width - 5}" y2="{height}" stroke="#bdbdbd"/>',
             f'<text x="2" y="12" font-size="10" fill="#757575">{top}</text>',
             f'<text x="2" y="{height}" font-size="10" fill="#757575">0</text>']
    for i, r in enumerate(trend):
        x = pad + i * slot + (slot - bar) / 2
        y = height
        if n <= 31:  # a run number under each bar while they fit
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{height + 14}" font-size="10" text-anchor="middle" fill="#757575">{i + 1}</text>')
        for part in ("kept", "quarantined", "deduped"):
            h = (height - 10) * r[part] / top
            if h > 0:
                y -= h
                parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{COLORS[part]}">'
                             f'<title>run {_e(r["run_id"])} ({_e(r["run_started_at"])}): {part} {r[part]} of {r["bronze"]} bronze rows</title></rect>')
    parts.append("</svg>")
    legend = "".join(f'<span><i style="background:{COLORS[p]}"></i>{p}</span>' for p in ("kept", "quarantined", "deduped"))
    return "".join(parts) + f'<div class="legend">{legend}</div>'


def age_svg(buckets: list[dict], width: int = 420, height: int = 18) -> str:
    """Open reject rows by age against retention, as one horizontal bar per bucket."""
    top = max([b["rows"] for b in buckets] + [1])
    rows = []
    for i, b in enumerate(buckets):
        w = (width - 170) * b["rows"] / top
        color = "#c62828" if b["bucket"] == "past retention" else "#1565c0"
        y = i * (height + 4)
        rows.append(f'<text x="0" y="{y + 13}" font-size="11">{_e(b["bucket"])}</text>'
                    f'<rect x="160" y="{y}" width="{w:.1f}" height="{height}" fill="{color}"/>'
                    f'<text x="{165 + w:.1f}" y="{y + 13}" font-size="11">{b["rows"]}</text>')
    total = len(buckets) * (height + 4)
    return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" role="img" aria-label="open rejects by age">{"".join(rows)}</svg>'


def _examples(examples: list[dict]) -> _Raw:
    if not examples:
        return _Raw('<span class="muted">none open</span>')
    items = []
    for ex in examples:
        items.append(f"<div>{_e(ex['where'])} <code>{_e(ex['source_row_id'])}</code> key <code>{_e(json.dumps(ex['key'], sort_keys=True))}</code>"
                     f" <code>{_e(json.dumps(ex['raw'], sort_keys=True, default=str))}</code></div>")
    return _Raw("".join(items))


def _entity(e: dict) -> str:
    out = [f'<h2 id="entity-{_e(e["entity"])}">{_e(e["entity"])}</h2>']
    latest = e["latest"]
    if latest is None:
        out.append('<p class="muted">Not built yet: no run of this entity is in mart_data_quality.</p>')
    else:
        out.append(f'<p class="muted">latest run {_e(latest["run_id"])} at {_e(latest["run_started_at"])}</p>')
        out.append(_table(["bronze", "kept", "flagged", "quarantined", "deduped"],
                          [[latest["bronze"], latest["kept"], "n/a" if e["flagged"] is None else e["flagged"],
                            latest["quarantined"], latest["deduped"]]], numeric={0, 1, 2, 3, 4}))
    out.append("<h3>Rows per run</h3>" + trend_svg(e["trend"]))
    out.append("<h3>Rules that fire most (latest run)</h3>")
    if e["top_rules"]:
        out.append(_table(["rule", "disposition", "rows", "examples"],
                          [[r["rule"], r["disposition"], r["rows_failed"], _examples(r["examples"])] for r in e["top_rules"]], numeric={2}))
    else:
        out.append('<p class="muted">No rule fired in the latest run.</p>')
    rej = e["rejects"]
    out.append(f"<h3>Open reject rows: {rej['open']}</h3>")
    if rej["open"]:
        out.append(f'<p class="muted">age since last seen, against retention {_e(rej["retention"])} (assay maintain deletes rows past it)</p>')
        out.append(age_svg(rej["by_age"]))
    if e["freshness"]:
        out.append("<h3>Freshness</h3>")
        out.append(_table(["source", "newest _ingested_at", "age (hours)", "warn after", "error after", "status"],
                          [[f["source"], f["newest_ingested_at"], f["age_hours"], f["warn_after"], f["error_after"],
                            _Raw(f'<span class="{ {"pass": "pass", "warn": "warn", "error": "fail"}.get(f["status"], "muted") }">{_e(f["status"])}</span>')]
                           for f in e["freshness"]], numeric={2}))
    return "".join(out)


def render(data: dict) -> str:
    """The whole page."""
    entities = data["entities"]
    nav = " · ".join(f'<a href="#entity-{_e(e["entity"])}">{_e(e["entity"])}</a>' for e in entities)
    summary = _table(
        ["entity", "bronze", "kept", "flagged", "quarantined", "deduped", "open rejects"],
        [[e["entity"]] + ([e["latest"][k] for k in ("bronze", "kept")] if e["latest"] else ["", ""])
         + ["n/a" if e["flagged"] is None else e["flagged"]]
         + ([e["latest"][k] for k in ("quarantined", "deduped")] if e["latest"] else ["", ""])
         + [e["rejects"]["open"]] for e in entities], numeric={1, 2, 3, 4, 5, 6})
    # The latest build's outcome of every entity comes first: a set-back build must not hide
    # behind the previous run's numbers (issue 19).
    outcomes = "".join(
        f'<li class="{"pass" if e["outcome"]["state"] == "published" else "fail"}">{_e(line(e["outcome"]))}</li>'
        for e in entities if e.get("outcome"))
    checks = data["checks"]
    if checks:
        check_html = _table(["table", "check", "kind", "enforcement", "result", "detail", "run"],
                            [[c["table"], c["check_id"], c["kind"], c["enforcement"],
                              _Raw(f'<span class="{"pass" if c["passed"] else "fail"}">{"passed" if c["passed"] else "failed"}</span>'),
                              c["detail"], c["run_id"]] for c in checks])
    else:
        check_html = '<p class="muted">No declared check has recorded a result.</p>'
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>assay report: {_e(data['project'])}</title><style>{CSS}</style></head><body>"
        f"<h1>assay report: {_e(data['project'])}</h1>"
        f'<p class="muted">as of {_e(data["generated_for"])} · {nav}</p>'
        f'<ul class="outcomes">{outcomes}</ul>'
        f"<h2>Latest run</h2>{summary}"
        f"<h2>Table checks (latest run per table)</h2>{check_html}"
        + "".join(_entity(e) for e in entities)
        + "</body></html>\n"
    )
