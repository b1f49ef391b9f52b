"""`redact:` removes a key inside a JSON column from the reject table's `raw` on Apache Spark
(local mode, parquet; decision 0943), as tests/integration/test_redact_json_keys.py proves on
DuckDB and PostgreSQL (same spec, same deliveries, same expectations). Spark has no JSON key
removal: the package rebuilds the object from its members. One build in the test process's
shared Spark, then tests/dbt_package/test_redacted_documents.py's odd documents through the
package's Spark spelling on the same Spark.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from tests.dbt_package.test_macro_render import render_env
from tests.dbt_package.test_redacted_documents import REDACT, judge, rows_sql
from tests.integration.test_redact_json_keys import ROWS, bronze, judge_raw, rejects, write_spec
from tests.support import spark
from tests.support.engines import SPARK, Engine

pytestmark = [pytest.mark.slow, pytest.mark.spark]


def test_raw_keeps_no_redacted_key_on_spark(tmp_path):
    reason = spark.java_missing()
    if reason:
        pytest.fail(reason)
    try:
        project = Engine(SPARK).dbt_project(tmp_path / "dbt", write_spec(tmp_path / "spec"), "redact_keys")
        project.load_bronze(bronze(ROWS))
        project.dbt("build", check=True)
        judge_raw(rejects(project))
        assert sorted(project.query("select patient_id, city, zip, status from silver.patient")) == [
            ("P1", "Köln", 50667, "active")]

        # the odd documents: nothing redacted is left, nothing else changes, every other path reads the same
        env = render_env("spark")
        raws = {int(i): r for i, r in project.query(f"select b.id, {env.row_json('b', REDACT)} from ({rows_sql(env.string_literal)}) as b")}

        def reads(pairs):
            if not pairs:
                return []
            union = " union all ".join(
                f"select {n} as n, {env.json_extract_text(env.string_literal(a), list(p))} as a, "
                f"{env.json_extract_text(env.string_literal(b), list(p))} as b" for n, (a, b, p) in enumerate(pairs))
            return [(a, b) for _, a, b in sorted(project.query(union))]

        judge(raws, reads)

        # a typed row keeps every digit and a timestamp's microseconds, in the dbt package's and
        # the SQLMesh macros' spelling alike: a map of strings turned a decimal(38,9) into a
        # double's digits, and to_json's default format cut microseconds (an outside tester, session 45)
        from assay_sqlmesh.json_text import row_json_sql

        typed = ("(select cast(123456789012345678.123456789 as decimal(38,9)) as wide, 7 as n, "
                 "cast('2026-11-23 03:30:00.123456' as timestamp) as ts, 'q' as x, cast(null as string) as z, "
                 "'{\"a\": 1, \"ssn\": \"9\"}' as doc) as t")
        want = {"wide": Decimal("123456789012345678.123456789"), "n": 7, "ts": "2026-11-23 03:30:00.123456Z", "z": None}
        for redact, expected in (([], {**want, "x": "q", "doc": '{"a": 1, "ssn": "9"}'}), (["x"], {**want, "doc": '{"a": 1, "ssn": "9"}'}),
                                 (["x", "doc.ssn"], {**want, "doc": '{"a":1}'})):
            for spelled in (env.row_json("t", redact), row_json_sql("t", redact, "spark")):
                got = json.loads(project.query(f"select {spelled} from {typed}")[0][0], parse_float=Decimal)
                assert got == expected, (redact, spelled, got)
    finally:
        spark.close_all()
