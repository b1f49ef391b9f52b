"""The operator's commands on real builds, DuckDB and PostgreSQL (15 and 18), one build per engine.

`assay explain`: why a key is, or is not, in the entity. `assay report`: the numbers (`--json`)
and the HTML page, opened in a real headless Chromium. `assay maintain`: retention deletes only
what has expired (unresolved rows from `last_seen`, resolved rows from `resolved_at`), a row exactly
at the cut-off stays, a dry run changes nothing, a second run deletes nothing, every run records one
event per reject table; the clock is injected with `--now`. The `dbt run-operation assay.maintain`
macro counts, deletes and records the same on the same rows. Explain and report run first: retention deletes.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from assay.report.charts import run_date
from tests.support.corpus import PRECEDENCE, Relation
from tests.support.dbtproject import make_project

pytestmark = pytest.mark.slow

COLS = ["_load_id", "_ingested_at", "_source_row_id", "order_id", "line_no", "order_date", "amount", "code", "status"]
CLEAN = ["l1", "2026-02-01T10:00:00Z", "ln_01", "ORD-1", "1", "2026-01-31", "10.00", "A", "open"]
# `pending` is not a status the spec knows, and codes must be unique (a quarantine rule).
HELD_2 = ["l1", "2026-02-01T11:00:00Z", "ln_02", "ORD-2", "1", "2026-01-31", "12.00", "B", "pending"]
HELD_3 = ["l1", "2026-03-01T10:00:00Z", "ln_03", "ORD-3", "1", "2026-01-31", "13.00", "D", "pending"]
BAD_AMOUNT = ["l1", "2026-03-01T10:00:00Z", "ln_05", "ORD-4", "1", "2026-01-31", "12,50", "F", "open"]
# a newer clean delivery of ORD-2 under a new id: ln_02 resolves as deduped in the second build
FIX_2 = ["l2", "2026-03-10T00:00:00Z", "ln_04", "ORD-2", "1", "2026-01-31", "12.00", "E", "open"]
OTHER = [
    Relation("q__codes", ["_load_id", "_ingested_at", "_source_row_id", "code_id", "code_flag", "code_quar", "code_fail"], []),
    Relation("q__dups", ["_load_id", "_ingested_at", "_source_row_id", "group_id", "status", "note"], []),
]


def _build(tmp_path, engine, pg=None):
    spec = tmp_path / "spec"
    shutil.copytree(PRECEDENCE / "spec", spec)
    mapping = spec / "mapping_lines.yaml"
    mapping.write_text(mapping.read_text().replace("target: q_line\n", "target: q_line\nfreshness: {warn_after: 6h, error_after: 1d}\n"))
    project = make_project(tmp_path / "proj", spec, engine=engine, pg=pg)
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3, BAD_AMOUNT])] + OTHER)
    project.dbt("build", check=True)
    project.load_bronze([Relation("q__lines", COLS, [CLEAN, HELD_2, HELD_3, BAD_AMOUNT, FIX_2])] + OTHER)
    project.dbt("build", check=True)
    return project, spec


def _run(project, spec, *args):
    res = CliRunner().invoke(cli, [*args, "--project", str(project.path), "--spec", str(spec)])
    return res.exit_code, res.output


def _explain(project, spec):
    # A key whose older delivery was quarantined and then lost to a newer clean one.
    code, out = _run(project, spec, "explain", "q_line", "ORD-2", "1")
    assert code == 0, out
    assert "q_line order_id='ORD-2', line_no='1': 2 deliveries in bronze." in out
    assert "It is in the entity (published). 0 open reject rows." in out
    assert "1. q__lines row ln_04 (load l2, ingested 2026-03-10 00:00:00): kept in the entity" in out
    assert "2. q__lines row ln_02 (load l1, ingested 2026-02-01 11:00:00): deduped" in out
    assert ("lost the dedupe to ln_04: _ingested_at '2026-03-10 00:00:00' beats '2026-02-01 11:00:00' "
            "(the latest wins; order: _ingested_at, _load_id, _source_row_id, _mapping, each descending)") in out
    assert "rule status_in_set (quarantine): held" in out
    assert "(deduped); first seen 2026-02-01 11:00:00, last seen 2026-02-01 11:00:00 (load l1), failed rules: status_in_set" in out

    # A key that is not in silver, and why.
    code, out = _run(project, spec, "explain", "q_line", "ORD-3", "1")
    assert code == 0, out
    assert "It is not in the entity: its judged delivery ln_03 was quarantined to the reject table. 1 open reject row." in out
    assert "quarantined because status_in_set (quarantine) fired" in out
    assert "rule status_in_set (quarantine): fired" in out

    # A value that did not cast, found by its source row.
    code, out = _run(project, spec, "explain", "q_line", "--source-row-id", "ln_05")
    assert code == 0, out
    assert "coercion failed: amount: bronze $.amount = '12,50' did not become a decimal(38,9)" in out
    assert "quarantined because amount_coercible (quarantine) fired" in out

    code, out = _run(project, spec, "explain", "q_line", "ORD-9", "1")
    assert code == 1, out  # nothing found is not an answer a script may take as one (issue 19)
    assert "q_line order_id='ORD-9', line_no='1': no delivery of it is in bronze" in out

    code, out = _run(project, spec, "explain", "q_line", "ORD-2", "1", "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["in_entity"] is True
    assert [(d["source_row_id"], d["route"]) for d in doc["deliveries"]] == [("ln_04", "kept"), ("ln_02", "deduped")]
    assert [(r["_source_row_id"], r["resolution"]) for r in doc["rejects"]] == [("ln_02", "deduped")]

    # Usage errors name what to write instead and exit 3.
    code, out = _run(project, spec, "explain", "q_line", "ORD-2")
    assert code == 3 and "give 2 values, in that order; got 1" in out
    code, out = _run(project, spec, "explain", "nope", "x")
    assert code == 3 and "no entity 'nope' in the spec" in out


def _maintain(project, spec, *extra):
    code, out = _run(project, spec, "maintain", "--json", *extra)
    assert code == 0, out
    return {e["entity"]: e for e in json.loads(out)}


def _rejects(project):
    return sorted(project.query("select _source_row_id, resolution from silver.q_line__reject"), key=lambda r: r[0])


def _retention(project, spec, macro):
    assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None), ("ln_05", None)]
    resolved_at = project.query("select resolved_at from silver.q_line__reject where _source_row_id = 'ln_02'")[0][0]

    # Bronze's own retention drops ln_05's delivery; ln_03's stays in bronze (decision 0951).
    conn = project.connect()
    try:
        conn.cursor().execute("delete from bronze.q__lines where _source_row_id = 'ln_05'")
    finally:
        conn.close()

    # explain still reads ln_05's judged delivery from the build, and does not say that a value
    # bronze no longer holds was NULL (probe 33, decision 0958)
    code, out = _run(project, spec, "explain", "q_line", "--source-row-id", "ln_05")
    assert code == 0, out
    assert ("coercion failed: amount: bronze $.amount did not become a decimal(38,9) (the delivery is no longer in "
            "bronze, so its value is not shown; the reject row's raw payload keeps it)") in out, out

    # Exactly 90 days after the last_seen of ln_03 and ln_05: at the cut-off, so they stay.
    at_cutoff = _maintain(project, spec, "--now", "2026-05-30T10:00:00Z")
    assert (at_cutoff["q_line"]["unresolved_deleted"], at_cutoff["q_line"]["resolved_deleted"]) == (0, 0)

    # A dry run one second later counts ln_05 and deletes nothing. ln_03 is past retention too,
    # but bronze still holds its delivery, which the next build would divert again into the same
    # reject row: it is kept, and counted as kept (decision 0951).
    dry = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z", "--dry-run")
    assert (dry["q_line"]["unresolved_deleted"], dry["q_line"]["resolved_deleted"], dry["q_line"]["unresolved_kept_in_bronze"]) == (1, 0, 1)
    assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None), ("ln_05", None)]
    code, out = _run(project, spec, "maintain", "--now", "2026-05-30T10:00:01Z", "--dry-run")
    assert code == 0 and ("silver.q_line__reject: kept 1 unresolved row past retention: bronze still holds its delivery, "
                          "which the next build would divert again; it expires once bronze's own retention drops it") in out, out

    # The report's health line says what maintain does with them at the same clock: ln_05 deleted,
    # ln_03 kept for bronze; not "2 past retention (assay maintain deletes them)" (probe Q6, decision 0979).
    code, out = _run(project, spec, "report", "--json", "--now", "2026-05-30T10:00:01Z")
    assert code == 0, out
    page = json.loads(out)
    line = next(x for x in page["health"]["lines"] if x["entity"] == "q_line")
    past = [r for r in line["reasons"] if "past retention" in r]
    assert past == ["1 open reject row past retention (assay maintain deletes it)",
                    "1 open reject row past retention that assay maintain keeps: bronze still holds its delivery "
                    "(decision 0951)"], line["reasons"]
    card = next(e for e in page["entities"] if e["entity"] == "q_line")["rejects"]
    assert (card["open"], card["past_retention_in_bronze"]) == (2, 1), card

    counted = {e["table"]: (e["unresolved_deleted"], e["resolved_deleted"], e["unresolved_kept_in_bronze"]) for e in dry.values()}
    if macro:
        # The run-operation (dbt_package/macros/maintenance/maintain.sql) counts what the command
        # counts, deletes the same rows and is idempotent too; the command then finds nothing left.
        # (DuckDB and PG18: each run-operation is a dbt start; PG15 runs the command's part only.)
        if macro == "all":
            assert _macro(project, True, "2026-05-30T10:00:01Z") == counted
            assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None), ("ln_05", None)]
        assert _macro(project, False, "2026-05-30T10:00:01Z") == counted
        assert _macro(project, False, "2026-05-30T10:00:01Z") == {t: (0, 0, k) for t, (_, _, k) in counted.items()}
    else:
        done = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z")
        assert {e["table"]: (e["unresolved_deleted"], e["resolved_deleted"], e["unresolved_kept_in_bronze"]) for e in done.values()} == counted
        assert _maintain(project, spec, "--now", "2026-05-30T10:00:01Z")["q_line"]["unresolved_deleted"] == 0
    # ln_02 was resolved by the second build (run time): measured from resolved_at, not last_seen.
    assert _rejects(project) == [("ln_02", "deduped"), ("ln_03", None)]

    again = _maintain(project, spec, "--now", "2026-05-30T10:00:01Z")
    assert again["q_line"]["unresolved_deleted"] + again["q_line"]["resolved_deleted"] == 0
    assert again["q_line"]["cutoff"] == "2026-03-01T10:00:01"

    later = (resolved_at + dt.timedelta(days=90, seconds=1)).isoformat()
    expired = _maintain(project, spec, "--now", later)
    assert (expired["q_line"]["unresolved_deleted"], expired["q_line"]["resolved_deleted"]) == (0, 1)
    assert _rejects(project) == [("ln_03", None)]  # kept while bronze holds its delivery
    # the other entities' reject tables were maintained too, with nothing to delete
    assert set(expired) == {"q_code", "q_dup", "q_line"}

    events = project.query(
        "select event_type, table_name, cutoff, row_count, why, occurred_at from assay_meta.assay_events "
        "where table_name = 'silver.q_line__reject'")
    # the at-cut-off run, the real run and its repeat (the macro's or the command's), the command's
    # repeat, the resolved expiry (dry runs record nothing)
    table = ("REJECTS_EXPIRED", "silver.q_line__reject")
    assert sorted((e[:4] for e in events), key=lambda e: (e[2], e[3])) == [
        (*table, dt.datetime(2026, 3, 1, 10, 0, 0), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 0),
        (*table, dt.datetime(2026, 3, 1, 10, 0, 1), 1),
        (*table, resolved_at + dt.timedelta(seconds=1), 1),
    ]
    # the macro's rows say what the command's say, in the same words and at the same clock
    same_cutoff = {(e[4], e[5]) for e in events if e[2] == dt.datetime(2026, 3, 1, 10, 0, 1)}
    assert same_cutoff == {("retention 90d: unresolved rows last seen before 2026-03-01 10:00:01 whose delivery bronze no "
                            "longer holds, and resolved rows resolved before it; 1 unresolved row past it kept, bronze "
                            "still holding its delivery", dt.datetime(2026, 5, 30, 10, 0, 1))}


MACRO_KEPT = re.compile(r"(\S+): kept (\d+) unresolved rows? past retention: bronze still holds (?:its|their) delivery")
MACRO_LINE = re.compile(r"(\S+): (?:would delete|deleted) \d+ rows? \(retention \S+, cut-off .+?: (\d+) unresolved, (\d+) resolved\)")


def _macro(project, dry_run: bool, now: str) -> dict:
    """`dbt run-operation assay.maintain`: table -> (unresolved deleted, resolved deleted, unresolved
    kept because bronze holds them) from the lines it logs."""
    args = "{dry_run: %s, now: '%s'}" % ("true" if dry_run else "false", now)
    res = project.dbt("run-operation", "assay.maintain", "--args", args)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    kept = {m.group(1): int(m.group(2)) for m in MACRO_KEPT.finditer(res.stdout)}
    found = {m.group(1): (int(m.group(2)), int(m.group(3)), kept.get(m.group(1), 0)) for m in MACRO_LINE.finditer(res.stdout)}
    assert found, res.stdout[-3000:]
    assert ("recorded one REJECTS_EXPIRED event per table" in res.stdout) is not dry_run
    return found


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _chromium(*args: str) -> subprocess.CompletedProcess:
    """Headless Chromium, stopped with all its helper processes if it runs past two minutes (a
    plain timeout kills only the first process, and the helpers keep the pipes open forever)."""
    proc = subprocess.Popen([CHROMIUM, *CHROMIUM_FLAGS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += "\nchromium ran past 120 s and was stopped"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _report(project, spec, browser: bool):
    code, out = _run(project, spec, "report", "--json", "--now", "2026-04-15T10:00:00Z")
    assert code == 0, out
    data = json.loads(out)
    line = next(e for e in data["entities"] if e["entity"] == "q_line")
    # Build 1: 4 bronze rows, ORD-1 kept, three quarantined. Build 2: ln_04 wins ORD-2, ln_02 deduped.
    assert [(r["bronze"], r["kept"], r["quarantined"], r["deduped"]) for r in line["trend"]] == [(4, 1, 3, 0), (5, 2, 2, 1)]
    assert {k: line["latest"][k] for k in ("bronze", "kept", "quarantined", "deduped")} == {"bronze": 5, "kept": 2, "quarantined": 2, "deduped": 1}
    assert line["flagged"] == 0
    assert [(r["rule"], r["disposition"], r["rows_failed"]) for r in line["top_rules"]] == [
        ("amount_coercible", "quarantine", 1), ("status_in_set", "quarantine", 1)]
    example = line["top_rules"][0]["examples"][0]
    assert (example["where"], example["source_row_id"], example["raw"]["amount"]) == ("reject", "ln_05", "12,50")
    # ln_03 and ln_05 were last seen 2026-03-01 10:00: 45 of 90 days old.
    assert line["rejects"]["open"] == 2
    assert [b["rows"] for b in line["rejects"]["by_age"]] == [0, 2, 0, 0, 0]
    assert [(f["source"], f["status"]) for f in line["freshness"]] == [("q__lines", "error")]
    for now, status in (("2026-03-10T03:00:00Z", "pass"), ("2026-03-10T12:00:00Z", "warn")):
        code, out = _run(project, spec, "report", "--json", "--now", now)
        fresh = next(e for e in json.loads(out)["entities"] if e["entity"] == "q_line")["freshness"]
        assert fresh[0]["status"] == status, (now, fresh)

    # The health verdict (issue 19): q_line's source is past error_after, so it needs attention first.
    verdict = data["health"]
    assert verdict["lines"][0]["entity"] == "q_line" and verdict["lines"][0]["level"] == "fail", verdict
    assert [(l["entity"], l["level"], l["headline"]) for l in verdict["lines"]] == [
        ("q_line", "fail", "q_line: published"), ("q_code", "ok", "q_code: published"), ("q_dup", "ok", "q_dup: published")]
    assert verdict["sentence"] == ("1 of 3 entities needs attention (1 failing, 0 with warnings): "
                                   "q_line (freshness error: q__lines 874.0 h old (error after 1d)).")
    # each rule's trend over both runs, and the ranking across entities
    trend = {t["rule"]: [r["rows_failed"] for r in t["runs"]] for t in line["rule_trend"]}
    assert trend["amount_coercible"] == [1, 1] and trend["status_in_set"][-1] == 1, trend
    assert [(r["entity"], r["rule"]) for r in data["ranking"][:2]] == [("q_line", "amount_coercible"), ("q_line", "status_in_set")]
    # the explain command printed beside the example explains that very row
    command = example["explain"]["command"]
    assert command.startswith("assay explain q_line ORD-4 "), example
    code, out = _run(project, spec, *shlex.split(command)[1:])
    assert code == 0 and "q__lines row ln_05" in out and "quarantined because amount_coercible (quarantine) fired" in out, out
    # dbt's own tests, from the last build's target/run_results.json
    assert data["tool"]["tool"] == "dbt" and data["tool"]["invocation"]["command"] == "build", data["tool"]
    assert data["tool"]["invocation"]["invocation_id"] == line["latest"]["run_id"]
    tests = {t["name"]: (t["entity"], t["status"]) for t in data["tool"]["results"]}
    assert tests["assay_reconcile__line_amount_matches_row"] == ("q_line", "pass")
    assert tests["assay_fail_rule__q_code__code_fail_unique"] == ("q_code", "pass")

    page = project.path / "report.html"
    code, out = _run(project, spec, "report", "--out", str(page), "--now", "2026-04-15T10:00:00Z")
    assert code == 0 and page.exists(), out
    text = page.read_text()
    assert not re.search(r"(src|href)=\"(https?:)?//", text), "the page must load nothing from the network"
    assert "<script" not in text and "@import" not in text and "url(" not in text
    if not browser:
        return
    assert CHROMIUM, "Debian's chromium is needed to open the report (.ci/run installs it)"
    profile = project.path / ".chromium"
    dom = _chromium(f"--user-data-dir={profile}", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    shown = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom.stdout)))
    assert "assay report:" in shown
    # entity, bronze, kept (flagged among them), quarantined, deduped, open rejects: 5 = 2 + 2 + 1
    assert "q_line 5 2 (0 flagged) 2 1 2" in shown
    # the verdict on top, before any section
    top = html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", dom.stdout[: dom.stdout.index("<h2")])))
    assert verdict["sentence"] in top and "q_line: published" in top and "freshness error: q__lines" in top, top
    # each rule's trend with the runs' dates under it, and dates under the rows-per-run bars
    card = dom.stdout[dom.stdout.index('id="entity-q_line"'):]
    rules = card[card.index('class="rule-trend"'): card.index("</table>", card.index('class="rule-trend"'))]
    first, last = (" ".join(run_date(r["run_started_at"])) for r in (line["trend"][0], line["trend"][-1]))
    assert rules.count('aria-label="rows failed per run"') == len(line["rule_trend"]) >= 2
    assert f'class="axis-date">{first}</text>' in rules and f'class="axis-date">{last}</text>' in rules, rules[:2000]
    bars = card[card.index('aria-label="rows per run'): card.index("</svg>", card.index('aria-label="rows per run'))]
    assert run_date(line["trend"][-1]["run_started_at"])[0] in bars
    assert command in shown  # the copyable explain command
    assert "dbt's own tests" in shown and "Rules that fail most rows, across entities" in shown
    assert "amount_coercible quarantine 1" in shown
    assert "Open reject rows: 2" in shown and "past retention" in shown
    assert "error" in shown
    assert 'aria-label="rows per run: kept, quarantined, deduped"' in dom.stdout
    artifacts = os.environ.get("ASSAY_TEST_ARTIFACTS")
    shot = (Path(artifacts) if artifacts else project.path) / f"assay-report-{project.engine}.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    snap = _chromium(f"--user-data-dir={profile}", f"--screenshot={shot}", "--window-size=1200,1800", page.as_uri())
    assert snap.returncode == 0 and shot.exists() and shot.stat().st_size > 10_000, snap.stderr[-2000:]


def _anomalies(project, spec):
    """`assay anomalies` over the build's mart with 60 earlier daily runs of q_line inserted before
    the two real ones: a spike injected on a Wednesday is found, and the real runs' loads (4 and 1
    rows against about 10,000) are drops, the latest of them failing the command with exit 2."""
    from assay.anomalies import synthetic
    from assay.anomalies.method import VOLUME

    real = sorted({r[0] for r in project.query("select run_id from gold.mart_data_quality where entity = 'q_line'")})
    assert len(real) == 2
    history = synthetic.generate(60, 3, weekly=True, entity="q_line", events=(synthetic.Event(VOLUME, 44, "spike", 3.0),))
    conn = project.connect()
    try:
        synthetic.insert_rows(conn, "gold.mart_data_quality", history, "%s" if project.engine == "postgres" else "?")
    finally:
        conn.close()
    latest = max(real, key=lambda r: project.query(f"select max(run_started_at) from gold.mart_data_quality where run_id = '{r}'")[0][0])

    code, out = _run(project, spec, "anomalies", "--entity", "q_line", "--json")
    assert code == 2, out
    doc = json.loads(out[: out.rindex("}") + 1])
    volume = [(a["run_id"], a["direction"], a["latest"]) for a in doc["anomalies"] if a["measure"] == "volume"]
    assert volume[0] == ("run-0044", "up", False)
    assert set(volume[1:]) == {(r, "down", r == latest) for r in real}
    spike = doc["anomalies"][0]
    assert (spike["run_date"], spike["run_started_at"], spike["season"]) == ("2026-02-18", "2026-02-18T06:00:00Z", "weekday")
    assert spike["band"][0] < spike["median"] < spike["band"][1] < spike["observed"] and spike["learnt_from"] == 6
    assert {a["entity"] for a in doc["anomalies"]} == {"q_line"}
    assert "the latest run is anomalous: q_line volume down." in out

    # Every entity: the two others have only the real runs, and say so instead of judging them.
    code, out = _run(project, spec, "anomalies")
    assert code == 2, out
    for entity in ("q_code", "q_dup"):
        assert f"{entity}: not enough history (2 runs recorded; a run is judged once 7 earlier runs can be learnt from)" in out
    assert "3 anomalies in the history of 3 entities" in out
    assert re.search(r"q_line +volume +run-0044 +2026-02-18 +\d[\d,]* +\[[\d,]+, [\d,]+\] +[\d,]+ +6 Wednesdays +up", out), out

    code, out = _run(project, spec, "anomalies", "--entity", "nope")
    assert code == 3 and "no entity 'nope' in the spec" in out


def _scenario(project, spec, browser: bool = False, macro=None):
    _explain(project, spec)
    _report(project, spec, browser)
    _retention(project, spec, macro)
    _anomalies(project, spec)


def test_operator_commands_on_duckdb(tmp_path):
    _scenario(*_build(tmp_path, "duckdb"), browser=True, macro="all")


@pytest.mark.postgres
def test_operator_commands_on_postgres(tmp_path, postgres_database):
    project, spec = _build(tmp_path, "postgres", postgres_database("operator"))
    version = int(project.query("select current_setting('server_version_num')")[0][0])
    _scenario(project, spec, macro="real" if version >= 180000 else None)
