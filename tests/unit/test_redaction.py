"""The redaction's path algebra and what assay shows of a redacted document (decision 0943);
the refusals are tests/spec/test_refusals.py's, the engines' spellings
tests/dbt_package/test_redacted_documents.py's and the builds tests/integration/test_redact_json_keys.py's."""

from __future__ import annotations

import json
from pathlib import Path

from assay.api import generate_dbt_project, load_project
from assay.api_sqlmesh import generate_sqlmesh_project
from assay.privacy import HIDDEN, shown_values
from assay.redaction import NOT_JSON, columns, inside, intersects, normalized, redacted_text

ROOT = Path(__file__).resolve().parents[2]
KITCHEN_SINK = ROOT / "tests" / "fixtures" / "specs" / "kitchen_sink"


def test_paths_intersect_when_one_is_a_prefix_of_the_other():
    assert intersects(("payload", "ssn"), ("payload", "ssn"))
    assert intersects(("payload", "ssn"), ("payload", "ssn", "x"))  # a field reading inside the value
    assert intersects(("payload",), ("payload", "city"))  # the column, while a field reads a key of it
    assert intersects(("payload", "addr", "ssn"), ("payload", "addr"))  # a field reading the object holding it
    assert not intersects(("payload", "ssn"), ("payload", "city"))
    assert not intersects(("payload", "ssn"), ("payloads", "ssn"))


def test_the_ir_keeps_each_path_once_dotted_and_none_inside_another():
    assert normalized([("payload", "ssn"), ("phone",), ("payload", "ssn"), ("payload", "a", "b"), ("payload", "a")]) == (
        "payload.a", "payload.ssn", "phone")
    assert normalized([("payload", "ssn"), ("payload",)]) == ("payload",)
    assert columns(("payload.a", "payload.ssn", "phone")) == ["payload", "phone"]
    assert inside(("payload.a.b", "payload.ssn", "phone")) == {"payload": [("a", "b"), ("ssn",)]}


def test_a_spec_may_redact_a_key_beside_the_keys_its_fields_read():
    sale = load_project(KITCHEN_SINK).entity("sale")  # reads $.payload.geo.country
    assert sale.redact == ("card", "payload.buyer.email")


def test_what_assay_shows_of_a_redacted_document():
    redact = ("payload.buyer.email", "phone")
    row = {"id": "1", "phone": "555", "payload": '{"buyer": {"email": "a@b.c", "tier": "gold"}, "n": 1.5}', "email": "a@b.c"}
    assert shown_values(row, {"email"}, redact) == {
        "id": "1", "payload": '{"buyer":{"tier":"gold"},"n":1.5}', "email": HIDDEN}
    # text that is not JSON cannot be rewritten and may hold the value: the stand-in, as in `raw`
    assert shown_values({"payload": '{"buyer": {"email": "a@b'}, (), redact) == {"payload": NOT_JSON}
    assert shown_values({"payload": None}, (), redact) == {"payload": None}
    assert redacted_text('[{"buyer": 1}]', [("buyer",)]) == '[{"buyer":1}]'  # no key at the path
    # a driver that parses a JSON column hands back an object
    assert shown_values({"payload": {"buyer": {"email": "x"}}}, (), redact) == {"payload": {"buyer": {}}}


def test_both_targets_hand_the_paths_to_the_row_json_of_every_reject_model(tmp_path):
    generate_dbt_project(KITCHEN_SINK, tmp_path / "dbt")
    reject = (tmp_path / "dbt" / "models" / "assay" / "sale" / "sale__reject.sql").read_text()
    assert reject.count('assay.row_json("bronze_row", ["card", "payload.buyer.email"])') == 2  # web and store mappings
    generate_sqlmesh_project(KITCHEN_SINK, tmp_path / "sqlmesh", dialect="duckdb")
    reject = next((tmp_path / "sqlmesh" / "models").rglob("*sale__reject*.sql")).read_text()
    assert reject.count("@assay_row_json(bronze_row, 'card', 'payload.buyer.email')") == 2


def test_a_column_left_out_whole_is_not_put_back_for_a_key_redacted_inside_it():
    """Kept check rows of a bronze table name `payload` (a pii field reads `$.payload.nick`) and
    `payload.secret` (redacted): the document rewritten for the key came back with the pii key
    (decision 1155; an outside tester, session 44). SQLMesh's spelling, run on DuckDB; the dbt
    package's is built in tests/integration/test_pii_outside_governed_dbt.py."""
    import duckdb

    from assay_sqlmesh import redact_json
    from assay_sqlmesh.json_text import row_json_sql

    assert redact_json.split(["payload.secret", "payload", "name"]) == (["name", "payload"], {})
    conn = duckdb.connect()
    conn.execute("""create table t as select 'p1' as id, 'N' as name, '{"nick":"PIIMARK","secret":"S"}' as payload""")
    (text,) = conn.execute(f"select {row_json_sql('t', ['payload', 'payload.secret', 'name'], 'duckdb')} from t").fetchone()
    assert json.loads(text) == {"id": "p1"}, text
