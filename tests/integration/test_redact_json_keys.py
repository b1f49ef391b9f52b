"""`redact:` removes a key inside a JSON column from the reject table's `raw` (decision 0943).

The outside tester's defect: `redact` named only whole bronze columns, so a sensitive value inside
a `payload` column that fields are read from stayed in `raw`. Now `redact: ["$.payload.ssn",
"$.payload.card.number"]` removes those keys from the document `raw` keeps of `payload`, on both
targets (the `runner` fixture) and on DuckDB and PostgreSQL 18 (each spells the rewrite
differently: a merge patch, an object rebuilt from its members; PostgreSQL 15's own validity
guard, the one difference, is held to the primitive table); Spark in
test_spark_redact_json_keys.py. A value of `payload` that is not JSON keeps only the stand-in
text, a NULL nothing; the fields read beside the redacted keys, a whole-column redaction and
the published rows are as before. Replay re-runs the mapping on such a `raw` and admits the row
(dbt; replay's code is the target's only by the build that follows). Expectations by hand.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from assay.api import generate_dbt_project
from assay.cli.main import cli
from tests.support.corpus import Relation

pytestmark = pytest.mark.slow

ENTITIES = """\
spec_version: 1
entities:
  patient:
    grain: one row per patient
    key: [patient_id]
    fields:
      patient_id: {type: string, required: true}
      city: {type: string}
      zip: {type: int}
      status: {type: string}
    quarantine: {retention: 7d, redact: ["$.payload.ssn", "$.payload.card.number", "$.phone"]}
"""
MAPPING = """\
mapping_version: 1
source: raw_patients
target: patient
key: {patient_id: {from: "$.id"}}
fields:
  city: {from: "$.payload.addr.city"}
  zip: {from: "$.payload.addr.zip", transform: [to_int]}
  status:
    from: "$.status"
    quality:
      - {rule: in_set, values: [active, closed], on_fail: quarantine}
unmapped: ["$._load_id", "$._ingested_at", "$._source_row_id", "$.phone"]
"""
COLS = ["_load_id", "_ingested_at", "_source_row_id", "id", "status", "phone", "payload"]
SECRET = "SECRET"  # every value a redaction names carries it; no other value does
KEPT = {"addr": {"city": "Köln", "zip": "50667"}, "card": {"exp": "12/29", "number": "4111-SECRET-1"}, "ssn": "SECRET-1"}
HELD = {"ssn": "SECRET-2", "addr": {"city": "Gent", "zip": "9000"}, "note": "ok 1.50",
        "card": {"number": "SECRET-3", "exp": "01/30", "tags": [1, 2.0, None, True]}}
# (source row, id, status, payload text): P2, P4 and P5 hold a status the first spec does not accept
ROWS = [
    ("r1", "P1", "active", json.dumps(KEPT)),
    ("r2", "P2", "pending", json.dumps(HELD)),
    ("r3", "P3", "active", '{"ssn": "SECRET-4", "addr": '),  # not JSON: city and zip do not cast
    ("r4", "P4", "pending", None),
    ("r5", "P5", "pending", '{"ssn": "SECRET-5", "ssn": "SECRET-6", "card": "no object", "addr": {"city": "Lyon"}}'),
]
NOT_JSON = "(redacted: not JSON)"
# what `raw` keeps of each diverted row's payload (None: no member), by hand
KEPT_PAYLOAD = {
    "r2": {"addr": {"city": "Gent", "zip": "9000"}, "note": "ok 1.50", "card": {"exp": "01/30", "tags": [1, 2.0, None, True]}},
    "r3": NOT_JSON,
    "r4": None,
}
REJECTS = [("r2", ["status_in_set"]), ("r3", ["city_coercible", "zip_coercible"]),
           ("r4", ["status_in_set"]), ("r5", ["status_in_set"])]


def bronze(rows) -> list[Relation]:
    return [Relation("raw_patients", COLS, [["l1", "2026-03-01T00:00:00Z", srid, pid, status, f"+49-{SECRET}-{pid}", payload]
                                            for srid, pid, status, payload in rows])]


def write_spec(spec, accepted=("active", "closed")):
    spec.mkdir(exist_ok=True)
    (spec / "entities.yml").write_text(ENTITIES)
    (spec / "patients.yml").write_text(MAPPING.replace("[active, closed]", "[" + ", ".join(accepted) + "]"))
    return spec


def rejects(project) -> dict:
    """source row -> (failed rules, raw as JSON)."""
    return {r[0]: (sorted(r[1]), json.loads(r[2])) for r in
            project.query("select _source_row_id, failed_rules, raw from silver.patient__reject where resolved_at is null")}


def judge_raw(found: dict) -> None:
    """What the reject rows keep: no secret anywhere, the payload's other members as delivered,
    the whole-column redaction and the other columns as before."""
    assert sorted((srid, rules) for srid, (rules, _) in found.items()) == REJECTS
    for srid, (_, raw) in found.items():
        assert SECRET not in json.dumps(raw, ensure_ascii=False), (srid, raw)
        assert "phone" not in raw and raw["id"] == "P" + srid[1:] and raw["_source_row_id"] == srid, raw
    for srid, payload in KEPT_PAYLOAD.items():
        raw = found[srid][1]
        if payload is None:
            assert raw.get("payload") is None, raw
        elif payload == NOT_JSON:
            assert raw["payload"] == NOT_JSON, raw
        else:
            assert json.loads(raw["payload"]) == payload, raw  # a string member holding the document
    # repeated keys: each engine keeps its own reading of the document, never a redacted value
    assert "Lyon" in found["r5"][1]["payload"] or found["r5"][1]["payload"] == NOT_JSON


@pytest.fixture(scope="module")
def built(tmp_path_factory, runner, engine):
    runner.require(engine)
    root = tmp_path_factory.mktemp(f"redact_keys_{runner.target}_{engine.id}")
    spec = write_spec(root / "spec")
    project = runner.project(engine, root / "project", spec, f"redact_keys_{engine.id}")
    try:
        project.load_bronze(bronze(ROWS))
        build = runner.build(project)
        out = {"build": (build.ok, build.log[-3000:], build.stopped), "rejects": rejects(project),
               "entity": sorted(project.query("select patient_id, city, zip, status from silver.patient"))}
        if runner.target == "sqlmesh":
            project.close()  # DuckDB: one process cannot hold the file twice
        for key in ("P2", "P3"):
            said = CliRunner().invoke(cli, ["explain", "patient", key, "--spec", str(spec), "--project", str(project.path)])
            out[f"explain {key}"] = (said.exit_code, said.output)
        yield out
    finally:
        runner.close(project)


def test_the_build_passes(built):
    ok, log, stopped = built["build"]
    assert ok, (log, stopped)


def test_raw_keeps_no_redacted_key_and_every_other_member(built):
    judge_raw(built["rejects"])


def test_the_published_rows_are_read_beside_the_redacted_keys(built):
    assert built["entity"] == [("P1", "Köln", 50667, "active")]


def test_explain_shows_the_bronze_row_without_the_redacted_keys(built):
    """`assay explain` reads bronze itself: the same removal, and a column that is not JSON is
    judged on its value and never shown."""
    for key in ("P2", "P3"):
        code, text = built[f"explain {key}"]
        assert code == 0 and SECRET not in text, text
    assert "Gent" in built["explain P2"][1]
    assert "city: bronze payload = (redacted: not shown) is not JSON, so $.payload.addr.city could not be read" in \
        built["explain P3"][1], built["explain P3"][1]


def test_replay_re_runs_the_mapping_on_a_raw_without_the_redacted_keys(tmp_path, engine):
    """P2's bronze row ages out; the spec accepts `pending`; replay re-delivers it from `raw`,
    whose payload lacks the redacted keys no field reads, and the next build admits it with the
    fields read beside them."""
    spec = write_spec(tmp_path / "spec")
    project = engine.dbt_project(tmp_path / "proj", spec, "redact_keys_replay")
    project.load_bronze(bronze(ROWS))
    project.dbt("build", check=True)
    judge_raw(rejects(project))
    project.load_bronze(bronze([r for r in ROWS if r[0] != "r2"]))  # r2 aged out of bronze
    generate_dbt_project(write_spec(spec, ("active", "closed", "pending")), project.path)
    said = CliRunner().invoke(cli, ["replay", "patient", "--spec", str(spec), "--project", str(project.path), "--json"])
    assert said.exit_code == 0, said.output
    assert json.loads(said.stdout)["redelivered"] == {"raw_patients": 1}
    (payload,) = project.query("select payload from bronze.raw_patients where _load_id = '__replay__'")[0]
    assert json.loads(payload) == KEPT_PAYLOAD["r2"]
    project.dbt("build", check=True)
    assert sorted(project.query("select patient_id, city, zip, status, _load_id from silver.patient")) == [
        ("P1", "Köln", 50667, "active", "l1"), ("P2", "Gent", 9000, "pending", "__replay__"),
        ("P4", None, None, "pending", "l1"), ("P5", "Lyon", None, "pending", "l1")]
    assert project.query("select resolution from silver.patient__reject where _source_row_id = 'r2'") == [("admitted",)]
    # r3 is still not JSON: judged as before, it stays open with the same rules
    assert sorted(rejects(project)) == ["r3"]
