"""The report's example rows (issue 19): a rule that fires only on rows beyond the first 500 flagged
(or diverted) rows still gets its examples; read from a real DuckDB warehouse shaped as the build
writes it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb

from assay.api import load_project
from assay.report.gather import EXAMPLE_SCAN, Gatherer
from assay.runtime.warehouse import Reader

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"


def test_a_rule_firing_only_past_the_scanned_rows_has_examples():
    project = load_project(EXAMPLE)
    order = project.entity("order")
    con = duckdb.connect(":memory:")
    con.execute("create schema silver")
    con.execute('create table silver."order" (order_id varchar, amount decimal(12,2), discount decimal(12,2), '
                "_source_row_id varchar, _mapping varchar, _quality_flags varchar[], _quality_ok boolean)")
    many = EXAMPLE_SCAN + 100
    con.execute('insert into silver."order" select \'O-\' || i, 10, 20, \'r\' || lpad(i::varchar, 5, \'0\'), '
                f"'raw_orders', ['discount_not_above_amount'], false from range({many}) t(i)")
    con.execute('insert into silver."order" values (\'O-X\', 20000, 0, \'r99999\', \'raw_orders\', [\'amount_range_max\'], false)')
    con.execute('create table silver."order__reject" (_source_row_id varchar, failed_rules varchar[], key_values varchar, '
                "raw varchar, resolved_at timestamp, last_seen timestamp)")
    seen = dt.datetime(2026, 12, 1)
    con.execute('insert into silver."order__reject" select \'q\' || lpad(i::varchar, 5, \'0\'), [\'status_in_enum\'], '
                f"'{{\"order_id\": \"Q\"}}', '{{}}', null, ? from range({many}) t(i)", [seen])
    con.execute('insert into silver."order__reject" values (\'q99999\', [\'amount_range_min\'], \'{"order_id": "N"}\', '
                "'{\"price\": \"-1\"}', null, ?)", [seen - dt.timedelta(days=1)])
    reader = Reader(con, "duckdb")
    gatherer = Gatherer(project, reader.query, reader.columns, reader.exists, reader.relation)
    rules = ["discount_not_above_amount", "amount_range_max", "status_in_enum", "amount_range_min"]
    examples = gatherer._examples(order, rules)
    assert [len(examples[r]) for r in rules] == [3, 1, 3, 1]
    assert examples["amount_range_max"][0]["source_row_id"] == "r99999"
    assert examples["amount_range_max"][0]["raw"] == {"amount": "20000.00"}
    assert examples["amount_range_min"][0] == {"where": "reject", "source_row_id": "q99999", "key": {"order_id": "N"},
                                               "raw": {"price": "-1"}}
