"""The report's charts as inline SVG (no script, no network): rows per run, a rule's failed rows
per run, the latest run's composition, open rejects by age. Every chart over runs labels its
x axis with the runs' start dates and times (UTC), so a reader never has to count bars.

Each function is a pure function of the gathered data; every text is escaped.
"""

from __future__ import annotations

import html
import math
from typing import Any, Optional

COLORS = {"kept": "#2e7d32", "flagged": "#f9a825", "quarantined": "#c62828", "deduped": "#9e9e9e", "rule": "#6a1b9a"}
AXIS = "#757575"
MAX_LABELS = 8  # date labels under a chart over runs; more runs get every k-th label and the last


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def run_date(stamp: Any) -> tuple[str, str]:
    """(date, HH:MM) of a run's start as recorded (`2026-12-02T22:10:51.57Z` -> `2026-12-02`, `22:10`)."""
    text = "" if stamp is None else str(stamp)
    day, _, rest = text.replace(" ", "T").partition("T")
    return day, rest[:5]


def _labelled(n: int) -> set[int]:
    """Which of n runs get a date label: all while they fit, else every k-th and the last."""
    if n <= MAX_LABELS:
        return set(range(n))
    step = math.ceil(n / MAX_LABELS)
    shown = set(range(0, n, step))
    before = max(shown)
    if before != n - 1 and (n - 1) - before < step / 2:
        shown.discard(before)  # the last run's label would overlap it
    return shown | {n - 1}


def _date_label(x: float, y: float, stamp: Any, size: int = 10, right: Optional[float] = None) -> str:
    """A run's date and time, centred under `x`; ended at `right` (the chart's edge) when centred
    it would run past it (a 10-character date is about 6 units a character wide)."""
    day, time = run_date(stamp)
    anchor = "middle"
    if right is not None and x + len(day) * size * 0.3 > right:
        x, anchor = right, "end"
    return (f'<text x="{x:.1f}" y="{y}" font-size="{size}" text-anchor="{anchor}" fill="{AXIS}" class="axis-date">'
            f'<tspan x="{x:.1f}">{_e(day)}</tspan><tspan x="{x:.1f}" dy="{size + 1}">{_e(time)}</tspan></text>')


def runs_svg(trend: list[dict], width: int = 560, height: int = 150) -> str:
    """Stacked bars per run (kept, quarantined, deduped: each bar is the run's bronze rows), the
    y axis from 0 to the largest run, each run's start date under its bar."""
    if not trend:
        return '<p class="muted">No run has been recorded in mart_data_quality yet.</p>'
    if not any(r["bronze"] for r in trend):
        return f'<p class="muted">{len(trend)} {"run" if len(trend) == 1 else "runs"} recorded, none with a bronze row.</p>'
    top = max(r["bronze"] for r in trend)
    left, bottom, n = 44, height - 30, len(trend)
    slot = (width - left - 8) / n
    bar = max(min(slot * 0.7, 40), 2)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" '
             f'role="img" aria-label="rows per run: kept, quarantined, deduped" class="chart">',
             f'<line x1="{left}" y1="{bottom}" x2="{width - 4}" y2="{bottom}" stroke="#bdbdbd"/>',
             f'<line x1="{left}" y1="6" x2="{left}" y2="{bottom}" stroke="#bdbdbd"/>']
    for value in sorted({0, top // 2, top}):
        y = bottom - (bottom - 8) * value / top
        parts.append(f'<text x="{left - 4}" y="{y + 3:.1f}" font-size="10" text-anchor="end" fill="{AXIS}">{value}</text>')
    labels = _labelled(n)
    for i, r in enumerate(trend):
        x = left + i * slot + (slot - bar) / 2
        y = bottom
        for part in ("kept", "quarantined", "deduped"):
            h = (bottom - 8) * r[part] / top
            if h > 0:
                y -= h
                parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{COLORS[part]}">'
                             f'<title>run {_e(r["run_id"])} ({_e(r["run_started_at"])}): {part} {r[part]} of {r["bronze"]} bronze rows</title></rect>')
        if i in labels:
            parts.append(_date_label(x + bar / 2, bottom + 11, r["run_started_at"], right=width - 2))
    parts.append("</svg>")
    return "".join(parts) + legend(("kept", "quarantined", "deduped"))


def legend(parts: tuple[str, ...]) -> str:
    """The colour key of a chart."""
    return '<div class="legend">' + "".join(f'<span><i style="background:{COLORS[p]}"></i>{p}</span>' for p in parts) + "</div>"


def rule_svg(runs: list[dict], width: int = 200, height: int = 50) -> str:
    """One rule's failed rows per run as small bars, its largest count at the top left, the first
    and the last run's start dates under them."""
    top = max([r["rows_failed"] for r in runs] + [1])
    bottom, left, n = height - 24, 4, len(runs)
    slot = (width - left * 2) / max(n, 1)
    bar = max(min(slot * 0.7, 14), 1.5)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
             f'role="img" aria-label="rows failed per run" class="spark">',
             f'<line x1="0" y1="{bottom}" x2="{width}" y2="{bottom}" stroke="#e0e0e0"/>',
             f'<text x="{width - 2}" y="9" font-size="9" text-anchor="end" fill="{AXIS}">max {top}</text>']
    for i, r in enumerate(runs):
        x = left + i * slot + (slot - bar) / 2
        h = (bottom - 12) * r["rows_failed"] / top
        parts.append(f'<rect x="{x:.1f}" y="{bottom - h:.1f}" width="{bar:.1f}" height="{max(h, 0.5):.1f}" fill="{COLORS["rule"] if h else "#e0e0e0"}">'
                     f'<title>{_e(r["run_started_at"])}: {r["rows_failed"]} {"row" if r["rows_failed"] == 1 else "rows"} failed '
                     f'(run {_e(r["run_id"])})</title></rect>')
    if runs:
        first, last = run_date(runs[0]["run_started_at"]), run_date(runs[-1]["run_started_at"])
        parts.append(f'<text x="0" y="{height - 3}" font-size="9" fill="{AXIS}" class="axis-date">{_e(" ".join(first))}</text>')
        if n > 1:
            parts.append(f'<text x="{width}" y="{height - 3}" font-size="9" text-anchor="end" fill="{AXIS}" class="axis-date">{_e(" ".join(last))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def composition_svg(latest: dict, flagged: Any, width: int = 220, height: int = 14) -> str:
    """The latest run's bronze rows as one bar: kept (its flagged rows marked apart), quarantined,
    deduped, so the parts visibly add up to bronze."""
    total = latest["bronze"] or 0
    if total <= 0:
        return ""
    flagged = flagged if isinstance(flagged, int) and 0 <= flagged <= latest["kept"] else 0
    parts, x = [], 0.0
    kept = latest["kept"]
    # the kept rows' two parts say they are parts of the kept count the table's cell shows
    said = {"kept": f"kept without a flag {kept - flagged} (of {kept} kept)" if flagged else f"kept {kept}",
            "flagged": f"kept with a flag {flagged} (of {kept} kept)"}
    for name, rows in (("kept", kept - flagged), ("flagged", flagged), ("quarantined", latest["quarantined"]),
                       ("deduped", latest["deduped"])):
        w = width * rows / total
        if w > 0:
            parts.append(f'<rect x="{x:.1f}" y="0" width="{w:.1f}" height="{height}" fill="{COLORS[name]}">'
                         f'<title>{said.get(name, f"{name} {rows}")} of {total} bronze rows</title></rect>')
            x += w
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="bronze rows: kept, flagged, quarantined, deduped">{"".join(parts)}</svg>')


def age_svg(buckets: list[dict], width: int = 420, height: int = 18) -> str:
    """Open reject rows by age against retention, as one horizontal bar per bucket."""
    top = max([b["rows"] for b in buckets] + [1])
    rows = []
    for i, b in enumerate(buckets):
        w = (width - 190) * b["rows"] / top
        color = "#c62828" if b["bucket"] == "past retention" else "#1565c0"
        y = i * (height + 4)
        rows.append(f'<text x="0" y="{y + 13}" font-size="11">{_e(b["bucket"])}</text>'
                    f'<rect x="160" y="{y}" width="{w:.1f}" height="{height}" fill="{color}"/>'
                    f'<text x="{165 + w:.1f}" y="{y + 13}" font-size="11">{b["rows"]}</text>')
    total = len(buckets) * (height + 4)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {total}" width="{width}" height="{total}" '
            f'role="img" aria-label="open rejects by age">{"".join(rows)}</svg>')
