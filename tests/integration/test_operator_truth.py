"""What the operator commands show is what the build did (issue 19), on one real dbt build on DuckDB.

The example project as a user's own dbt project would have it: without a `generate_schema_name`
macro, so dbt's default builds `main_silver`, `main_gold` and `main_assay_meta`. `assay report`,
`table list|get`, `maintain --dry-run`, `checks`, `check list` and `explain` must read those
relations (the counts of the example project: the demo's), and the build's own events and check
results must land in the meta schema dbt built, not in a second one spelled as in assay.yml.

Then a second build whose required check fails: `assay table get order` says it was set back and
why and exits 2, `table list` and the report's top say so first. Values of fields classified `pii`
(the example's customer email) appear nowhere in the report, explain, or their JSON.

One project, built twice; the first build's answers are read before the second build runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli.main import cli
from tests.support import dbtserver

pytestmark = [
    pytest.mark.slow,
    pytest.mark.long("the operator commands on dbt's default schema names; in the fast loop test_operator_commands_dbt.py runs every operator command"),
]

# The demo's counts of the example project (tests/cli/test_demo.py): bronze, kept, flagged,
# quarantined, deduped.
DEMO = {"customer": (6, 3, 1, 2, 1), "order": (10, 5, 3, 4, 1)}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
PII_VALUES = ("not-an-email", "linus@example.com", "ken@example.com")


def _assay(project: Path, *args: str) -> tuple[int, str]:
    res = CliRunner().invoke(cli, [*args, "--project", str(project)])
    return res.exit_code, res.output


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    """The example project without assay's schema macro, built once by dbt."""
    from assay.runtime.bronze import load_csv_dir_duckdb

    project = tmp_path_factory.mktemp("truth") / "shop"
    code, out = _assay_init(project)
    assert code == 0, out
    (project / "macros" / "generate_schema_name.sql").unlink()
    code, out = _assay(project, "generate", "dbt", "--spec", str(project))
    assert code == 0, out
    assert "main_silver" in out and "assay's commands read them there" in out
    load_csv_dir_duckdb(project / "warehouse.duckdb", project / "bronze", "bronze")
    dbtserver.in_project(project, "deps", check=True)
    dbtserver.in_project(project, "build", check=True)
    return project


def _assay_init(project: Path) -> tuple[int, str]:
    res = CliRunner().invoke(cli, ["init", str(project)])
    return res.exit_code, res.output


def _schemas(project: Path) -> set[str]:
    import duckdb

    con = duckdb.connect(str(project / "warehouse.duckdb"), read_only=True)
    try:
        return {r[0] for r in con.execute("select distinct table_schema from information_schema.tables").fetchall()}
    finally:
        con.close()


def test_commands_read_where_dbt_built(shop):
    # dbt's default naming; the build's events and results went where dbt built the meta models
    assert _schemas(shop) == {"bronze", "main_silver", "main_gold", "main_assay_meta"}

    code, out = _assay(shop, "report", "--json")
    assert code == 0, out
    doc = json.loads(out)
    for e in doc["entities"]:
        latest = e["latest"]
        got = (latest["bronze"], latest["kept"], e["flagged"], latest["quarantined"], latest["deduped"])
        assert got == DEMO[e["entity"]], (e["entity"], got)
    assert [c["check_id"] for c in doc["checks"]] == ["ENOUGH_ORDERS"]
    # every timestamp of the JSON in ISO 8601, UTC (issue 19)
    stamps = [doc["generated_for"], doc["checks"][0]["recorded_at"]] + [e["latest"]["run_started_at"] for e in doc["entities"]] + [
        f["newest_ingested_at"] for e in doc["entities"] for f in e["freshness"]]
    assert all(ISO.fullmatch(s) for s in stamps), stamps

    code, out = _assay(shop, "table", "list")
    assert (code, out.strip()) == (0, "order: published")
    code, out = _assay(shop, "table", "get", "order")
    assert (code, out.strip()) == (0, "order: published")

    code, out = _assay(shop, "maintain", "--dry-run", "--json")
    assert code == 0, out
    assert {(e["entity"], e["table"]) for e in json.loads(out)} == {
        ("customer", "main_silver.customer__reject"), ("order", "main_silver.order__reject")}

    code, out = _assay(shop, "checks")
    assert code == 0, out
    assert "order: ENOUGH_ORDERS: passed: row count 5 satisfies the declared minimum of 1" in out

    code, out = _assay(shop, "explain", "order", "O-1")
    assert code == 0, out
    assert "It is in the entity (published)." in out

    # the quality history is read in main_gold too (it was looked for in `gold`: "no quality history yet")
    code, out = _assay(shop, "anomalies", "--json")
    assert code == 0, out
    assert "no quality history yet" not in out
    assert json.loads(out)["runs"] == {"customer": 1, "order": 1}, out  # one build of each, read from main_gold

    # Without the manifest, dbt's default naming is computed from the profile: the same answers.
    manifest = shop / "target" / "manifest.json"
    kept = manifest.read_bytes()
    manifest.unlink()
    try:
        code, out = _assay(shop, "table", "get", "order")
        assert (code, out.strip()) == (0, "order: published")
        # A macro of the user's own cannot be computed: refused, saying what writes the manifest.
        (shop / "macros" / "my_schemas.sql").write_text(
            "{% macro generate_schema_name(custom_schema_name, node) -%}x_{{ custom_schema_name }}{%- endmacro %}\n")
        code, out = _assay(shop, "report", "--json")
        assert code == 1, out
        assert "run `dbt parse` (or `dbt build`)" in out
        code, out = _assay(shop, "checks")
        assert code == 1 and "target/manifest.json" in out, out
    finally:
        (shop / "macros" / "my_schemas.sql").unlink(missing_ok=True)
        manifest.write_bytes(kept)


def test_a_manifest_of_another_target_is_not_read_for_this_one(shop):
    """An outside tester (session 36): built with `--target dev` last, `--target prod` read dev's
    schemas (the manifest's) in prod's warehouse and answered "never built" for tables prod held.
    Here the manifest is the `dev` target's (`main_*` schemas); target `alt` of the same file, with
    schema `alt`, was never built: its tables are `alt_*`, which hold nothing, not dev's."""
    import yaml

    profiles = shop / "profiles.yml"
    kept = profiles.read_text()
    doc = yaml.safe_load(kept)
    profile = next(iter(doc.values()))
    profile["outputs"]["alt"] = dict(profile["outputs"]["dev"], schema="alt")
    profiles.write_text(yaml.safe_dump(doc))
    try:
        code, out = _assay(shop, "table", "get", "order", "--target", "alt")
        assert code == 2 and "never built" in out, out
        code, out = _assay(shop, "maintain", "--dry-run", "--json", "--target", "alt")
        assert "main_silver" not in out, out
        # the target the manifest was written for still reads it
        code, out = _assay(shop, "table", "get", "order", "--target", "dev")
        assert (code, out.strip()) == (0, "order: published")
    finally:
        profiles.write_text(kept)


def test_a_manifest_of_another_target_is_not_read_for_it_under_a_macro_of_the_users_own(shop):
    """Outside testers (sessions 40, 45): with the project's own `generate_schema_name` and two
    targets in one DuckDB file, `--target prod` read dev's tables, and `maintain --target prod`
    deleted and recorded in them; after `dbt parse --target dev` (which writes no run results)
    the manifest was taken for any target's. The schemas cannot be worked out under a user's macro:
    a manifest is read for the target its build named in run_results.json, and for any other
    target (or when nothing says whose it is) assay asks dbt, with a `dbt parse` of that target
    into a scratch folder (decision 1160)."""
    import yaml

    profiles, macro = shop / "profiles.yml", shop / "macros" / "my_schemas.sql"
    manifest, results = shop / "target" / "manifest.json", shop / "target" / "run_results.json"
    kept, kept_manifest, kept_results = profiles.read_text(), manifest.read_bytes(), results.read_bytes()
    doc = yaml.safe_load(kept)
    profile = next(iter(doc.values()))
    profile["outputs"]["alt"] = dict(profile["outputs"]["dev"], schema="alt")
    profiles.write_text(yaml.safe_dump(doc))
    macro.write_text("{% macro generate_schema_name(custom_schema_name, node) -%}"
                     "{{ target.schema }}_{{ custom_schema_name }}{%- endmacro %}\n")
    try:
        def answers() -> None:
            # alt's tables are alt_*, which no build wrote: never built, and no main_* table read
            code, out = _assay(shop, "table", "get", "order", "--target", "alt")
            assert code == 2 and "never built" in out and "main_" not in out, out
            code, out = _assay(shop, "maintain", "--dry-run", "--json", "--target", "alt")
            assert "main_silver" not in out, out
            # dev, whose build wrote main_*, reads them
            for args in (("table", "get", "order"), ("table", "get", "order", "--target", "dev")):
                code, out = _assay(shop, *args)
                assert (code, out.strip()) == (0, "order: published"), (args, out)

        answers()  # the manifest of dev's build
        dbtserver.in_project(shop, "parse", "--target", "alt", check=True)
        answers()  # a `dbt parse` of alt wrote it: nothing says whose it is
        assert results.read_bytes() == kept_results and manifest.read_bytes() != kept_manifest
    finally:
        profiles.write_text(kept)
        macro.unlink(missing_ok=True)
        manifest.write_bytes(kept_manifest)
        results.write_bytes(kept_results)


def test_a_naming_macro_added_after_the_build_moves_nothing_it_built(shop):
    """An outside tester (session 45): assay's own `generate_schema_name`, added after a build of
    dbt's default naming, made every command say "never built" and `maintain` do nothing: the
    schemas the macro names were taken over those the build's manifest records."""
    from assay.scaffold import GENERATE_SCHEMA_NAME

    macro = shop / "macros" / "generate_schema_name.sql"
    macro.write_text(GENERATE_SCHEMA_NAME)
    try:
        code, out = _assay(shop, "table", "get", "order")
        assert (code, out.strip()) == (0, "order: published"), out
        code, out = _assay(shop, "maintain", "--dry-run", "--json")
        assert code == 0 and "main_silver" in out, out
    finally:
        macro.unlink()


def test_the_generated_project_parses_without_warnings_about_its_own_files(shop):
    run = dbtserver.in_project(shop, "parse", "--no-partial-parse", check=True)
    # the type-2 snapshot's properties live in the snapshots file only (issue 19)
    assert "specified in the models section" not in run.stdout, run.stdout[-3000:]


def test_pii_values_are_never_shown(shop):
    code, out = _assay(shop, "report", "--json")
    assert code == 0, out
    for value in PII_VALUES:
        assert value not in out, value
    code, html_out = _assay(shop, "report", "--out", str(shop / "r.html"))
    assert code == 0, html_out
    page = (shop / "r.html").read_text(encoding="utf-8")
    for value in PII_VALUES:
        assert value not in page, value
    for args in (("explain", "customer", "C3"), ("explain", "customer", "C3", "--json"),
                 ("explain", "customer", "--source-row-id", "c-004")):
        code, out = _assay(shop, *args)
        assert code == 0, out
        for value in PII_VALUES:
            assert value not in out, (args, value)
        assert "email" in out  # the field is named, its value is not


def test_explain_says_what_it_cannot_find_and_what_was_delivered(shop):
    # a key bronze never delivered: said, and exit 1 (a script must not read it as found)
    code, out = _assay(shop, "explain", "order", "O-404")
    assert code == 1, out
    assert "no delivery of it is in bronze" in out and "assay explain order takes order_id" in out
    # O-3 was delivered with customer c9, which no customer has: its key became '__unknown__'
    code, out = _assay(shop, "explain", "order", "O-3")
    assert code == 0, out
    assert ("customer_id: the delivered $.customer = 'c9' matches no customer, so the entity "
            "holds '__unknown__' (relationship order_of_customer)") in out
    # the report's example of the referential rule shows the key that was missing, not {}
    code, out = _assay(shop, "report", "--json")
    order = next(e for e in json.loads(out)["entities"] if e["entity"] == "order")
    rule = next(r for r in order["top_rules"] if r["rule"] == "order_of_customer_referential")
    assert {ex["source_row_id"]: ex["raw"] for ex in rule["examples"]}["o-003"] == {"customer_id": "c9"}


def test_set_back_build_is_visible(shop):
    """Runs last: a second build whose required check fails sets `order` back."""
    entities = shop / "spec" / "entities.yml"
    entities.write_text(entities.read_text().replace(
        "enforcement: advisory, min_rows: 1}", "enforcement: required, min_rows: 1000}"))
    code, out = _assay(shop, "generate", "dbt")
    assert code == 0, out
    run = dbtserver.in_project(shop, "build")
    assert run.returncode != 0 and "CHECK_FAILED" in run.stdout

    code, out = _assay(shop, "table", "get", "order")
    assert code == 2, out
    assert out.startswith("order: set back by the latest build (run ")
    assert "check ENOUGH_ORDERS did not pass; the previous version is still published" in out
    code, out = _assay(shop, "table", "get", "order", "--json")
    assert code == 2
    state = json.loads(out[: out.rindex("}") + 1])
    assert (state["state"], state["check"], state["why"]) == ("set_back", "ENOUGH_ORDERS", "previous_version_kept")
    assert ISO.fullmatch(state["since"]), state
    # ... and, after the state, what happened in that build: the failed check and the set-back, newest first
    events = [(e["event"], e["run"], e["check"]) for e in state["events"]]
    assert ("TABLE_ROLLED_BACK", state["run"], "ENOUGH_ORDERS") in events and ("CHECK_FAILED", state["run"], "ENOUGH_ORDERS") in events, events
    assert all(ISO.fullmatch(e["at"]) for e in state["events"])
    assert [e["at"] for e in state["events"]] == sorted((e["at"] for e in state["events"]), reverse=True)
    code, out = _assay(shop, "table", "get", "order")
    assert f"\nevents, newest first:\n" in out and f"  TABLE_ROLLED_BACK  run {state['run']} check ENOUGH_ORDERS: previous_version_kept\n" in out, out
    code, out = _assay(shop, "table", "list")
    assert code == 0 and out.startswith("order: set back by the latest build"), out

    code, out = _assay(shop, "report", "--json")
    assert code == 0, out
    doc = json.loads(out)
    order = next(e for e in doc["entities"] if e["entity"] == "order")
    assert order["outcome"]["state"] == "set_back" and order["outcome"]["check"] == "ENOUGH_ORDERS"
    code, out = _assay(shop, "report", "--out", str(shop / "r.html"))
    page = (shop / "r.html").read_text(encoding="utf-8")
    top = page[: page.index("<h2")]
    assert "order: set back by the latest build" in top
