"""The kitchen-sink spec (most of the grammar at once) through `sqlmesh plan`, judged by the very
assertions the dbt target is judged by (tests/integration/test_kitchen_sink_dbt.py): two mappings
into one entity, JSON paths, upper-case and reserved bronze column names, every transform family,
every field rule kind, row rules, a type-2 parent, entities without quality or metadata,
coverage and reconcile."""

from __future__ import annotations

import logging

import pytest

from tests.integration.test_kitchen_sink_dbt import BRONZE, SPEC, KitchenSink
from tests.support.sqlmeshproject import make_project

pytestmark = pytest.mark.slow


class TestKitchenSinkSQLMeshDuckDB(KitchenSink):
    @pytest.fixture(scope="class")
    def built(self, tmp_path_factory):
        p = make_project(tmp_path_factory.mktemp("ks_sqlmesh"), SPEC)
        p.load_bronze(BRONZE)
        handler = _Capture()
        logging.getLogger("sqlmesh").addHandler(handler)
        try:
            p.plan()  # raises if a blocking audit (the `fail` reconcile among them) fails
        finally:
            logging.getLogger("sqlmesh").removeHandler(handler)
        p.warnings = [r.getMessage() for r in handler.records]
        yield p
        p.close()

    def test_type2_parent_and_quarantined_products(self, built):
        # SQLMesh names the validity interval valid_from / valid_to (dbt: dbt_valid_*)
        assert built.query('select sku, valid_to is null from silver."product"') == [("A1", True)]
        rej = {r[0]: list(r[1]) for r in built.query('select _source_row_id, failed_rules from silver."product__reject"')}
        assert rej == {"p2": ["label_length_max", "list_price_range_min"], "p3": ["active_coercible", "list_price_coercible"]}

    def test_flag_checks_warn_and_fail_checks_pass(self, built):
        warnings = " ".join(built.warnings)
        # coverage (flag): one store without sales; reconcile (flag): S1 and S3 differ by more than 0.5
        assert "'assay_coverage' audit error: 1 row failed" in warnings
        assert "'assay_reconcile' audit error: 2 rows failed" in warnings


class _Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record)
