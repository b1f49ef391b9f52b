"""The report page as a data lead reads it (issue 19), from gathered data to HTML, no build:
the health verdict on top and worst first, the summary columns adding up with flagged shown as a
part of kept, dates on every chart over runs, a rule's trend and the ranking across entities, the
`assay explain` command per example row, dbt's own test outcomes, and no value of a `pii` field or
a redacted column anywhere on the page (gathered from a real in-process DuckDB warehouse shaped as
the build writes it, on a spec whose key is classified pii)."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from assay.api import load_project
from assay.privacy import HIDDEN
from assay.report.commands import explain_command
from assay.report.gather import Gatherer
from assay.report.health import health
from assay.report.html import render
from assay.report.tool_results import MESSAGE_NOT_SHOWN, NOT_RECORDED_BY_SQLMESH, tool_results
from assay.runtime.warehouse import Reader

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
DAYS = ["2026-11-28T06:00:00Z", "2026-11-29T06:00:00Z", "2026-11-30T06:30:00Z"]


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def _run(i: int, bronze: int, kept: int, quarantined: int, deduped: int) -> dict:
    return {"run_id": f"run-{i}", "run_started_at": DAYS[i], "bronze": bronze, "kept": kept,
            "quarantined": quarantined, "deduped": deduped}


def _entity(name: str, runs: list[dict], flagged: int, *, outcome: str = "published", freshness: str = "pass",
            rules: tuple = (), examples: tuple = ()) -> dict:
    latest = runs[-1] if runs else None
    trend = [{"rule": r, "disposition": d, "runs": [{"run_id": run["run_id"], "run_started_at": run["run_started_at"],
                                                     "rows_failed": n} for run, n in zip(runs, counts)]}
             for r, d, counts in rules]
    return {
        "entity": name,
        "spec": {"owner": f"{name}-team", "grain": f"one row per {name}", "description": f"All the {name}s we know.",
                 "key": [f"{name}_id"], "scd": "type1", "retention": "30d",
                 "fields": [{"name": f"{name}_id", "type": "string", "required": True, "classification": None,
                             "description": f"The {name}'s id."}]},
        "outcome": {"table": name, "state": outcome, "run": "run-2" if outcome != "published" else None,
                    "check": "ENOUGH_ROWS" if outcome != "published" else None,
                    "why": "previous_version_kept" if outcome == "set_back" else None, "since": None, "built_by_project": True},
        "latest": latest, "flagged": flagged, "trend": runs, "rule_trend": trend,
        "top_rules": [{"rule": r, "disposition": d, "rows_failed": counts[-1], "examples": list(examples)}
                      for r, d, counts in rules if counts[-1]],
        "rejects": {"open": 0, "by_age": [], "retention": "30d"},
        "freshness": [{"source": f"raw_{name}s", "newest_ingested_at": DAYS[-1], "age_hours": 30.0, "warn_after": "1d",
                       "error_after": "2d", "status": freshness}],
    }


def _data() -> dict:
    entities = [
        _entity("alpha", [_run(0, 4, 4, 0, 0), _run(1, 6, 5, 1, 0), _run(2, 10, 5, 4, 1)], 3,
                rules=(("amount_range", "quarantine", (0, 1, 4)), ("email_pattern", "flag", (0, 2, 3))),
                examples=({"where": "reject", "source_row_id": "a-7", "key": {"alpha_id": "A 7"}, "raw": {"amount": "-5"},
                           "explain": {"command": "assay explain alpha 'A 7'", "note": None}},)),
        _entity("beta", [_run(0, 6, 3, 2, 1)], 1, freshness="warn"),
        _entity("gamma", [_run(1, 2, 2, 0, 0), _run(2, 3, 3, 0, 0)], 0, outcome="set_back"),
    ]
    from assay.report.gather import _ranking

    data = {"project": "shop", "generated_for": "2026-12-01T10:00:00Z", "entities": entities, "tables": [],
            "checks": [{"run_id": "run-2", "table": "gamma", "check_id": "ENOUGH_ROWS", "kind": "row_expectation",
                        "enforcement": "required", "passed": False, "outcome": "FAILED", "detail": "row count 3 is below the declared minimum of 1000",
                        "recorded_at": DAYS[-1], "position": 1}],
            "ranking": _ranking(entities), "tool": None}
    data["health"] = health(data)
    return data


def test_the_verdict_comes_first_worst_first():
    data = _data()
    assert [(l["entity"], l["level"]) for l in data["health"]["lines"]] == [("gamma", "fail"), ("beta", "warn"), ("alpha", "ok")]
    assert data["health"]["sentence"].startswith("2 of 3 entities need attention (1 failing, 1 with warnings): gamma (set back by the latest build")
    page = render(data)
    top = page[: page.index("<h2")]  # before any section: the verdict
    text = _text(top)
    assert data["health"]["sentence"] in text
    assert text.index("gamma: set back by the latest build (run run-2): check ENOUGH_ROWS did not pass") < text.index("beta: published") \
        < text.index("alpha: published")
    assert "check ENOUGH_ROWS failed: row count 3 is below the declared minimum of 1000" in text
    # the entity cards follow the verdict's order
    assert page.index('id="entity-gamma"') < page.index('id="entity-beta"') < page.index('id="entity-alpha"')
    assert "freshness warn: raw_betas 30.0 h old (warn after 1d)" in text


def test_counts_of_an_earlier_build_say_so():
    # the set-back build recorded no counts in the mart: the summary says whose counts it shows
    data = _data()
    data["entities"][2]["outcome"].update(run="run-3", since="2026-12-01T07:15:00Z")
    data["health"] = health(data)
    text = _text(render(data))
    assert "2026-11-30 06:30 (before the set back build of 2026-12-01 07:15)" in text
    assert "latest run run-2 at 2026-11-30 06:30 UTC (before the set back build of 2026-12-01 07:15): bronze 3 =" in text
    assert "gamma: set back by the latest build (run run-3)" in text and "since 2026-12-01 07:15" in text
    assert data["health"]["sentence"].startswith(
        "2 of 3 entities need attention (1 failing, 1 with warnings): gamma (set back by the latest build, check ENOUGH_ROWS did not pass); beta (")


def test_a_kept_entitys_later_set_back_is_no_earlier_build():
    # kept by run-1 (it published), run-2 set back: the counts are run-2's, a build that did not
    # publish, never "before the kept build" (an outside tester, session 48)
    data = _data()
    data["entities"][2]["outcome"].update(state="kept", run="run-1", since="2026-11-30T06:00:00Z")
    data["entities"][2]["unpublished_builds"] = ["run-2"]
    data["health"] = health(data)
    text = _text(render(data))
    assert "before the kept build" not in text
    assert "latest run run-2 at 2026-11-30 06:30 UTC (a build that was not published)" in text, text


def test_the_summary_adds_up_and_flagged_is_part_of_kept():
    page = render(_data())
    summary = page[page.index('<table class="summary">'): page.index("</table>", page.index('<table class="summary">'))]
    rows = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)] for tr in re.findall(r"<tr>(.*?)</tr>", summary)[1:]]
    assert [r[:5] for r in rows] == [["alpha", "10", "5 (3 flagged)", "4", "1"], ["beta", "6", "3 (1 flagged)", "2", "1"],
                                     ["gamma", "3", "3 (0 flagged)", "0", "0"]]
    for entity, bronze, kept, quarantined, deduped, *_ in rows:
        assert int(bronze) == int(kept.split()[0]) + int(quarantined) + int(deduped), entity
    # each card says the same as one equation, and the bar of the latest run has a flagged part
    assert "bronze 10 = kept 5 (3 flagged) + quarantined 4 + deduped 1" in _text(page)
    assert "<title>kept with a flag 3 (of 5 kept) of 10 bronze rows</title>" in page
    assert "<title>kept without a flag 2 (of 5 kept) of 10 bronze rows</title>" in page


def test_an_incremental_tables_flagged_rows_are_not_passed_off_as_this_runs():
    data = _data()
    data["entities"][1]["flagged"] = 9  # more than the run kept: the published table holds earlier runs
    text = _text(render(data))
    assert "3 (the published table holds 9 flagged rows, of this and earlier runs)" in text


def test_every_chart_over_runs_has_dates():
    page = render(_data())
    card = page[page.index('id="entity-alpha"'):]
    card = card[: card.index("</section>")]
    runs = card[card.index('aria-label="rows per run'): card.index("</svg>", card.index('aria-label="rows per run'))]
    assert [d for d in re.findall(r'<tspan[^>]*>([^<]*)</tspan>', runs)] == [
        "2026-11-28", "06:00", "2026-11-29", "06:00", "2026-11-30", "06:30"]
    # one sparkline per rule that failed rows, its first and last run's dates under it
    trend = card[card.index('<table class="rule-trend">'): card.index("</table>", card.index('<table class="rule-trend">'))]
    assert trend.count('aria-label="rows failed per run"') == 2
    assert re.findall(r'class="axis-date">([^<]*)</text>', trend) == ["2026-11-28 06:00", "2026-11-30 06:30"] * 2
    assert "<title>2026-11-30T06:30:00Z: 4 rows failed (run run-2)</title>" in trend
    # many runs: the labels thin out, the last run is always labelled
    from assay.report.charts import runs_svg

    many = [dict(_run(0, 5, 5, 0, 0), run_id=f"r{i}", run_started_at=f"2026-10-{i + 1:02d}T06:00:00Z") for i in range(30)]
    labels = re.findall(r'<tspan x="[^"]*">(\d{4}-\d\d-\d\d)</tspan>', runs_svg(many))
    assert 2 <= len(labels) <= 8 and labels[0] == "2026-10-01" and labels[-1] == "2026-10-30"
    # the last run's date ends at the chart's right edge instead of running past it (an outside
    # tester's page showed "2026-12-0"); the others stay centred under their bars
    anchors = re.findall(r'text-anchor="(\w+)" fill="[^"]*" class="axis-date"><tspan x="([\d.]+)">\d{4}', runs_svg(many))
    assert anchors[-1] == ("end", "558.0") and {a for a, _ in anchors[:-1]} == {"middle"}, anchors
    assert all(float(x) + 30 <= 560 for a, x in anchors[:-1])
    from assay.report.charts import composition_svg

    bar = composition_svg({"bronze": 137, "kept": 130, "quarantined": 0, "deduped": 7}, 10)
    assert re.findall(r"<title>([^<]*)</title>", bar) == [
        "kept without a flag 120 (of 130 kept) of 137 bronze rows", "kept with a flag 10 (of 130 kept) of 137 bronze rows",
        "deduped 7 of 137 bronze rows"]


def test_the_ranking_spans_entities():
    data = _data()
    assert [(r["entity"], r["rule"], r["rows_failed"], r["share"]) for r in data["ranking"]] == [
        ("alpha", "amount_range", 4, 0.4), ("alpha", "email_pattern", 3, 0.3)]
    ranking = _text(render(data))
    assert "1 alpha amount_range quarantine 4 40.0% 2026-11-30 06:30" in ranking


def test_spec_metadata_and_the_explain_command_are_on_the_card():
    text = _text(render(_data()))
    assert "owner alpha-team · grain one row per alpha · key alpha_id" in text
    assert "All the alphas we know." in text and "The alpha's id." in text
    assert "assay explain alpha &#x27;A 7&#x27;" in render(_data())  # escaped in the page, copied as typed


def test_explain_command_is_exact_and_quoted():
    project = load_project(EXAMPLE)
    order = project.entity("order")
    assert explain_command(order, {"key": {"order_id": "O-1"}, "source_row_id": "o-001"}, frozenset()) == {
        "command": "assay explain order O-1", "note": None}
    assert explain_command(order, {"key": {"order_id": "O 1;rm"}, "source_row_id": "o-001"}, frozenset(),
                           options=("--environment", "dev"))["command"] == "assay explain order --environment dev 'O 1;rm'"
    # a key that starts with a dash is not read as an option
    assert explain_command(order, {"key": {"order_id": "-5"}, "source_row_id": "o-005"}, frozenset(),
                           options=("--target", "prod"))["command"] == "assay explain order --target prod -- -5"
    # a key that did not cast: the row is named by its source row id
    got = explain_command(order, {"key": {"order_id": None}, "source_row_id": "o-009"}, frozenset())
    assert got["command"] == "assay explain order --source-row-id o-009" and "not known here" in got["note"]


@pytest.fixture
def private_spec(tmp_path):
    """The example's spec with the customer's key classified pii (its bronze column `id` too)."""
    spec = tmp_path / "spec"
    shutil.copytree(EXAMPLE, spec)
    entities = spec / "spec" / "entities.yml"
    text = entities.read_text()
    entities.write_text(text.replace("customer_id: {type: string, required: true}",
                                     "customer_id: {type: string, required: true, classification: pii}", 1))
    return load_project(spec)


SECRET_KEY, SECRET_EMAIL, SECRET_PHONE = "CUST-SECRET-77", "alice.private@example.org", "+358-40-5550199"


def _warehouse(project) -> Reader:
    con = duckdb.connect(":memory:")
    for schema in ("silver", "gold", "bronze"):
        con.execute(f"create schema {schema}")
    con.execute("create table gold.mart_data_quality (entity varchar, mapping varchar, rule varchar, disposition varchar, "
                "rows_evaluated bigint, rows_failed bigint, rows_quarantined bigint, rows_deduped bigint, run_id varchar, "
                "run_date date, run_started_at timestamp)")
    for i, day in enumerate(("2026-11-29 06:00:00", "2026-11-30 06:00:00")):
        con.execute("insert into gold.mart_data_quality values ('customer', null, '(entity)', '(entity)', 3, 0, 1, 0, ?, ?, ?), "
                    "('customer', 'raw_customers', 'email_pattern', 'flag', 0, 1, 0, 0, ?, ?, ?), "
                    "('customer', 'raw_customers', 'country_length', 'quarantine', 0, 1, 0, 0, ?, ?, ?)",
                    [f"run-{i}", day[:10], day] * 3)
    con.execute("create table silver.customer__current (customer_id varchar, email varchar, country varchar, _source_row_id varchar, "
                "_mapping varchar, _quality_flags varchar[], _quality_ok boolean)")
    con.execute("insert into silver.customer__current values (?, ?, 'FI', 'c-001', 'raw_customers', ['email_pattern'], false), "
                "('C2', 'b@example.com', 'FI', 'c-002', 'raw_customers', [], true)", [SECRET_KEY, SECRET_EMAIL])
    con.execute("create table silver.customer__reject (_source_row_id varchar, failed_rules varchar[], key_values varchar, raw varchar, "
                "resolved_at timestamp, last_seen timestamp)")
    con.execute("insert into silver.customer__reject values ('c-009', ['country_length'], ?, ?, null, timestamp '2026-11-30 06:00:00')",
                [json.dumps({"customer_id": SECRET_KEY}),
                 json.dumps({"id": SECRET_KEY.lower(), "email": SECRET_EMAIL, "phone": SECRET_PHONE, "country": "Finland"})])
    return Reader(con, "duckdb")


def test_no_pii_or_redacted_value_anywhere_on_the_page(private_spec, tmp_path):
    reader = _warehouse(private_spec)
    gatherer = Gatherer(private_spec, reader.query, reader.columns, reader.exists, reader.relation)
    data = gatherer.gather(dt.datetime(2026, 12, 1, 10), tool=tool_results(private_spec, tmp_path / "no-dbt-here", "dbt"))
    page = render(data)
    dumped = json.dumps(data, default=str)
    for secret in (SECRET_KEY, SECRET_KEY.lower(), SECRET_EMAIL, SECRET_PHONE):
        assert secret not in page and secret not in dumped, secret
    customer = next(e for e in data["entities"] if e["entity"] == "customer")
    examples = {r["rule"]: r["examples"] for r in customer["top_rules"]}
    assert examples["country_length"][0]["raw"]["email"] == HIDDEN and "phone" not in examples["country_length"][0]["raw"]
    # the key is pii: no command carries it; the row is named by its source row id, and the page says why
    for rule, source_row in (("country_length", "c-009"), ("email_pattern", "c-001")):
        got = examples[rule][0]["explain"]
        assert got["command"] == f"assay explain customer --source-row-id {source_row}", got
        assert "the key (customer_id) is classified pii, so no command with it is printed" in got["note"]
    assert "assay explain customer --source-row-id c-009" in page
    assert "the key (customer_id) is classified pii" in _text(page)
    # the two runs are on the page with their dates, and the verdict is on top
    assert "2026-11-29" in page and "2026-11-30" in page
    assert page.index('class="verdict') < page.index("<h2")
    # no run_results.json: said, not an error
    assert "run_results.json is not there" in _text(page)


def test_dbt_test_outcomes_and_messages_that_may_quote_data(tmp_path):
    project = load_project(EXAMPLE)
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "dbt_project.yml").write_text("name: shop\n")
    (target / "manifest.json").write_text(json.dumps({"nodes": {
        "test.shop.assay_coverage__every_customer_ordered.76": {"name": "assay_coverage__every_customer_ordered",
                                                               "attached_node": "model.shop.customer__current"},
        "test.shop.not_null_order_amount.1": {"name": "not_null_order_amount", "depends_on": {"nodes": ["model.shop.order"]}}}}))
    (target / "run_results.json").write_text(json.dumps({
        "metadata": {"invocation_id": "inv-1", "generated_at": "2026-12-01T09:00:00Z", "dbt_version": "1.11.0"},
        "args": {"which": "build"},
        "results": [
            {"unique_id": "model.shop.order", "status": "success", "message": "OK"},
            {"unique_id": "model.shop.order__current", "status": "error",
             "message": "Compilation Error in model order\n  CHECK_FAILED: ENOUGH_ORDERS: row count 5 is outside the declared bounds [1000, ]."},
            {"unique_id": "model.shop.customer__current", "status": "error",
             "message": f"Conversion Error: Could not convert string '{SECRET_EMAIL}' to INT32"},
            {"unique_id": "test.shop.assay_coverage__every_customer_ordered.76", "status": "warn", "failures": 1,
             "message": "Got 1 result, configured to warn if != 0"},
            {"unique_id": "test.shop.not_null_order_amount.1", "status": "fail", "failures": 2,
             "message": "Got 2 results, configured to fail if != 0"}]}))
    tool = tool_results(project, tmp_path, "dbt")
    # worst first; a model that built is not listed; an error's message may quote the data: not copied
    assert [(t["entity"], t["name"], t["status"], t["message"]) for t in tool["results"]] == [
        ("customer", "customer__current", "error", MESSAGE_NOT_SHOWN),
        ("order", "order__current", "error", "assay's check ENOUGH_ORDERS did not pass (its result is among the table checks)"),
        ("order", "not_null_order_amount", "fail", "Got 2 results, configured to fail if != 0"),
        ("customer", "assay_coverage__every_customer_ordered", "warn", "Got 1 result, configured to warn if != 0")]
    data = _data()
    data["tool"] = tool
    data["health"] = health(data)
    page = render(data)
    assert SECRET_EMAIL not in page
    text = _text(page)
    assert "dbt build (invocation inv-1) at 2026-12-01 09:00 UTC" in text
    assert "not_null_order_amount test fail 2 Got 2 results, configured to fail if != 0" in text
    sqlmesh = tool_results(project, tmp_path, "sqlmesh")
    assert sqlmesh["note"] == NOT_RECORDED_BY_SQLMESH and not sqlmesh["results"]
    assert "SQLMesh keeps no per-audit outcome" in _text(render(dict(data, tool=sqlmesh)))


def test_dbt_outcomes_of_another_target_are_not_shown(tmp_path):
    # `dbt build --target dev`, then `assay report` of prod (the profile's default): dev's tests
    # judged dev's warehouse, so prod's page must not carry them (an outside tester, session 40)
    project = load_project(EXAMPLE)
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "dbt_project.yml").write_text("name: shop\nprofile: shop\n")
    (tmp_path / "profiles.yml").write_text(
        "shop:\n  target: prod\n  outputs:\n    dev: {type: duckdb, path: dev.duckdb}\n"
        "    prod: {type: duckdb, path: prod.duckdb}\n")
    (target / "manifest.json").write_text(json.dumps({"nodes": {}}))
    meta = {"invocation_id": "inv-dev", "generated_at": "2026-12-01T09:00:00Z", "dbt_version": "1.11.0"}
    (target / "run_results.json").write_text(json.dumps({
        "metadata": meta, "args": {"which": "build", "target": "dev"},
        "results": [{"unique_id": "test.shop.not_null_order_amount.1", "status": "fail", "failures": 2,
                     "message": "Got 2 results, configured to fail if != 0"}]}))
    (target / "sources.json").write_text(json.dumps({"metadata": meta, "results": [
        {"unique_id": "source.shop.bronze.raw_orders", "status": "error", "max_loaded_at": None, "snapshotted_at": None}]}))
    prod = tool_results(project, tmp_path, "dbt")
    assert not prod["results"] and not prod["freshness"] and prod["invocation"] is None
    assert prod["note"] == ("target/run_results.json is dbt's last invocation against target 'dev', not 'prod', which "
                            "this report reads: its tests judged another warehouse, so they are not shown; run "
                            "`dbt build --target prod` to see this target's.")
    assert "not_null_order_amount" not in _text(render(dict(_data(), tool=prod)))
    dev = tool_results(project, tmp_path, "dbt", target="dev")
    assert [t["name"] for t in dev["results"]] == ["not_null_order_amount"] and dev["note"] is None
    assert [f["source"] for f in dev["freshness"]] == ["raw_orders"]


def test_a_never_built_entity_and_a_table_assay_only_reads():
    data = _data()
    data["entities"] = [dict(_entity("delta", [], None), outcome={"table": "delta", "state": "not_published", "run": None,
                                                                  "check": None, "why": "never built", "since": None,
                                                                  "built_by_project": True})]
    data["tables"] = [{"table": "erp.payments", "state": "published", "run": None, "check": None,
                       "why": "not built by this project", "since": None, "built_by_project": False}]
    data["checks"] = [{"run_id": "run-2", "table": "erp.payments", "check_id": "PAYMENTS_ROWS", "kind": "row_expectation",
                       "enforcement": "advisory", "passed": False, "outcome": "warned", "detail": "row count 0 is below the declared minimum of 1",
                       "recorded_at": DAYS[-1], "position": 1}]
    data["ranking"] = []
    data["health"] = verdict = health(data)
    assert [(l["entity"], l["kind"], l["level"], l["headline"]) for l in verdict["lines"]] == [
        ("delta", "entity", "warn", "delta: not published (never built)"),
        ("erp.payments", "table", "warn", "erp.payments: published (not built by this project)")]
    assert verdict["lines"][0]["reasons"] == ["never built: no run of it is in mart_data_quality"]
    assert verdict["lines"][1]["reasons"] == ["check PAYMENTS_ROWS warned: row count 0 is below the declared minimum of 1"]
    assert verdict["sentence"].startswith("2 of 2 tables need attention (0 failing, 2 with warnings): delta (")
    text = _text(render(data))
    assert "check PAYMENTS_ROWS warned: row count 0 is below the declared minimum of 1" in text
    assert "Not built yet: no run of this entity is in mart_data_quality." in text


def test_the_entitys_line_counts_passed_checks_as_assay_checks_does():
    """Decision 1120: an advisory check that failed did not pass (`assay checks` prints it FAILED and
    exits 2), so the line does not count it as passed; it says how many failed and warned."""
    from assay.report.health import _entity_line

    checks = [{"table": "shop", "check_id": c, "passed": p, "outcome": o, "detail": ""}
              for c, p, o in (("A", True, "passed"), ("B", False, "warned"), ("C", False, "FAILED"),
                              ("D", True, "warned"))]  # D: a SQL check file on warn passes with rows (002)
    line = _entity_line({"entity": "shop", "latest": {"run_id": "r"}}, checks, {})
    assert (line["checks_passed"], line["checks"]) == (2, 4)
    # disjoint parts that add up (an outside tester read `2 of 4 passed (3 warned)` as more than 4)
    assert line["checks_tally"] == "2 of 4 passed (1 of them warned); 2 did not: 1 failed, 1 warned"


def test_an_errored_check_says_errored_once():
    """An outside tester's repro (session 33, DuckDB and PostgreSQL 15 alike): a SQL check file whose
    cast fails in the engine is recorded `errored` with detail `errored: <engine message>`
    (decision 0511); the health line read `check silver.order/bad_cast errored: errored: ...`."""
    from assay.report.health import _entity_line

    checks = [{"table": "order", "check_id": "silver.order/bad_cast", "passed": False, "outcome": "errored",
               "detail": 'errored: invalid input syntax for type integer: "refunded"'}]
    line = _entity_line({"entity": "order", "latest": {"run_id": "r"}}, checks, {})
    said = " ".join(line["reasons"])
    assert 'check silver.order/bad_cast errored: invalid input syntax for type integer: "refunded"' in said
    assert "errored: errored:" not in said


def test_a_failed_advisory_check_is_not_counted_as_passed_on_the_page():
    """The tester's repro: one advisory value_range check failed; the page said `checks 1 of 1 passed`."""
    data = _data()
    data["entities"] = data["entities"][:1]
    name = data["entities"][0]["entity"]
    data["checks"] = [{"run_id": "run-2", "table": name, "check_id": "VALUE_CAP", "kind": "value_range",
                       "enforcement": "advisory", "passed": False, "outcome": "warned",
                       "detail": "column 'v' holds '5000', above the declared maximum of 1000",
                       "recorded_at": DAYS[-1], "position": 1}]
    data["tables"] = []
    data["health"] = verdict = health(data)
    line = verdict["lines"][0]
    assert (line["checks_passed"], line["checks"], line["checks_tally"]) == (0, 1, "0 of 1 passed; 1 did not: 1 warned")
    text = _text(render(data))
    assert "checks 0 of 1 passed; 1 did not: 1 warned" in text
    assert "checks 1 of 1 passed" not in text
    assert "check VALUE_CAP warned: column 'v' holds '5000', above the declared maximum of 1000" in text


def test_an_entity_of_a_sqlmesh_plan_that_failed_elsewhere_is_not_called_never_built():
    """Decision 1122: the plan built it, failed on another entity, and SQLMesh promoted nothing."""
    data = _data()
    run = "SQLMESH_PLAN: 1111aaaa"
    data["entities"] = [dict(_entity("carrier", [], None), outcome={
        "table": "carrier", "state": "not_published", "run": run, "check": "NO_FUTURE", "why": "plan_failed",
        "since": DAYS[-1], "built_by_project": True, "failed_table": "tracking_event", "built_in": run})]
    data["tables"], data["checks"], data["ranking"] = [], [], []
    data["health"] = verdict = health(data)
    [line] = verdict["lines"]
    assert line["headline"] == (f"carrier: not published: the plan that built it (run {run}) failed on tracking_event "
                                "(check NO_FUTURE did not pass), and SQLMesh publishes no view of a failed plan")
    assert line["level"] == "fail" and not any("never built" in r for r in line["reasons"]), line
    assert verdict["sentence"].endswith("carrier (not published, the plan failed on tracking_event).")
    text = _text(render(data))
    assert "never built" not in text and "Not built yet" not in text
    assert "its latest build was not published" in text


def test_an_entity_dbt_skipped_for_its_upstream_says_so():
    """Decision 0940: dbt skipped `item` because `shop`, which it reads, was set back in that run."""
    data = _data()
    run = "0f1e2d3c-0000-4000-8000-000000000001"
    data["entities"] = [dict(_entity("item", [], None), outcome={
        "table": "item", "state": "set_back", "run": run, "check": "ENOUGH_SHOPS", "why": "upstream_failed",
        "since": DAYS[-1], "built_by_project": True, "upstream": "shop", "check_table": "shop"})]
    data["tables"], data["checks"], data["ranking"] = [], [], []
    data["health"] = verdict = health(data)
    [line] = verdict["lines"]
    assert line["headline"] == (f"item: set back by the latest build (run {run}): it was not written because its upstream "
                                "entity shop did not pass check ENOUGH_SHOPS; the previous version is still published")
    assert line["level"] == "fail", line
    assert verdict["sentence"].endswith("item (set back by the latest build, not written because upstream shop failed)."), \
        verdict["sentence"]


def test_an_incremental_entitys_bronze_is_said_to_be_the_ledgers():
    """A second outside tester deleted a built bronze row of an incremental entity: the page said
    `bronze 31` over a bronze of 30 rows, with no note. The summary now says what it counts."""
    data = _data()
    data["entities"][0]["spec"]["materialized"] = "incremental"
    assert "bronze counts the deliveries its ledger holds" in _text(render(data))
    data["entities"][0]["spec"]["materialized"] = "table"
    assert "bronze counts the deliveries its ledger holds" not in _text(render(data))


def test_reject_rows_of_a_build_that_was_not_published_are_counted_apart():
    # decision 0944: gamma's set-back build run-2 is the mart's latest run and diverted 4 of the 5
    # open reject rows; on SQLMesh its reject model also resolved one
    data = _data()
    gamma = data["entities"][2]
    gamma["unpublished_builds"] = ["run-2"]
    gamma["rejects"] = {"open": 5, "by_age": [], "retention": "30d",
                        "unpublished": {"runs": ["run-2"], "open": 4, "resolved": 1}}
    data["health"] = health(data)
    [line] = [l for l in data["health"]["lines"] if l["entity"] == "gamma"]
    by = "run run-2, a build whose entity was not published"
    assert line["reasons"][-2:] == [
        f"4 open reject rows were last judged by {by}; the published version of the entity was built before that "
        "judgement, and the next build that publishes judges them again",
        f"1 reject row was resolved by {by}: the published table does not hold what it admitted until a build publishes it"]
    page = render(data)
    summary = page[page.index('<table class="summary">'): page.index("</table>", page.index('<table class="summary">'))]
    rows = [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)] for tr in re.findall(r"<tr>(.*?)</tr>", summary)[1:]]
    assert rows[2][:7] == ["gamma", "3", "3 (not published)", "0", "0", "5 (4 not published)",
                           "2026-11-30 06:30 (a build that was not published)"]
    text = _text(page)
    assert "latest run run-2 at 2026-11-30 06:30 UTC (a build that was not published): bronze 3 = kept 3 (not published)" in text
    assert f"Open reject rows: 5 4 open reject rows were last judged by {by};" in text


def test_the_builds_since_the_last_publish_are_walked_back_over_failed_builds():
    from assay.report.gather import unpublished_builds

    runs = [_run(0, 1, 1, 0, 0), _run(1, 1, 1, 0, 0), _run(2, 1, 1, 0, 0)]
    set_back = {"state": "set_back", "run": "run-2"}
    # run-1 failed too, run-0 published: both failed builds are since the last publish
    assert unpublished_builds(set_back, runs, {"run-1", "run-2"}) == ["run-2", "run-1"]
    assert unpublished_builds(set_back, runs, {"run-2"}) == ["run-2"]
    # a stop that recorded no mart row is the latest build; the walk starts from the mart's newest
    assert unpublished_builds({"state": "not_published", "run": "run-3"}, runs, {"run-3", "run-2"}) == ["run-3", "run-2"]
    # the latest build published (on SQLMesh, in place): nothing is apart
    for state in ("published", "published_failing"):
        assert unpublished_builds({"state": state, "run": "run-2"}, runs, {"run-1", "run-2"}) == []
    # kept by run-1, which published; run-2 was set back and the mark stands (002): run-2 is apart
    # (an outside tester, session 48); kept by the latest build: nothing is
    assert unpublished_builds({"state": "kept", "run": "run-1"}, runs, {"run-2"}) == ["run-2"]
    assert unpublished_builds({"state": "kept", "run": "run-2"}, runs, {"run-1"}) == []
    assert unpublished_builds({"state": "not_published", "run": None}, runs, set()) == []


def test_checks_of_an_earlier_build_than_the_headlines_name_their_run():
    """An outside tester's child entity: set back by run acea (its key check failed), then skipped by
    run 405b (its parent's `fail` rule stopped it). The headline names 405b; the checks next to it
    are acea's, and said nothing of it."""
    data = _data()
    data["entities"] = [_entity("ticket", [_run(0, 4, 4, 0, 0)], 0, outcome="set_back")]
    data["entities"][0]["outcome"]["run"] = "405b"
    data["checks"] = [{"run_id": "acea", "table": "ticket", "check_id": "SEAT_UNIQUE", "kind": "key_uniqueness",
                       "enforcement": "required", "passed": False, "outcome": "FAILED", "detail": "repeats",
                       "recorded_at": DAYS[-1], "position": 1}]
    data["tables"] = []
    data["health"] = verdict = health(data)
    assert verdict["lines"][0]["checks_run"] == "acea"
    assert "checks of run acea: 0 of 1 passed; 1 did not: 1 failed" in _text(render(data))
    # the checks of the build the headline names carry no run: it is that build's
    data["entities"][0]["outcome"]["run"] = "acea"
    data["health"] = health(data)
    assert data["health"]["lines"][0]["checks_run"] is None
    assert "checks 0 of 1 passed; 1 did not: 1 failed" in _text(render(data))


def test_all_healthy_speaks_of_freshness_only_where_some_is_declared():
    # an outside tester read "every declared source is fresh" of a spec that declares none (session 45)
    fresh = _entity("alpha", [_run(0, 4, 4, 0, 0)], 0)
    data = {"entities": [fresh], "tables": [], "checks": [], "tool": None}
    assert health(data)["sentence"] == ("All 1 entity is healthy: every latest build published, no check failed, "
                                        "every declared source is fresh.")
    data["entities"] = [{**fresh, "freshness": []}]
    assert health(data)["sentence"] == "All 1 entity is healthy: every latest build published and no check failed."


def test_a_share_that_rounds_to_nothing_is_not_shown_as_nothing():
    from assay.report.html import _share

    assert [_share(1 / 15198), _share(0), _share(0.5), _share(None)] == ["<0.1%", "0.0%", "50.0%", ""]
