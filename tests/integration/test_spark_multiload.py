"""The multi-load story on Apache Spark (local mode, parquet): the shared suite
(tests/integration/test_multiload.py), every test of it, run with the dbt target on Spark.

Several loads with re-deliveries, a rule change and a full refresh, matched against the oracle
after every load. On parquet the reject history and its resolution are rebuilt beside the old
table and swapped in (assay_keyed, decision 0801), which is what this exercises build after
build. In the test process's shared Spark process (tests/support/spark.py).
"""

from __future__ import annotations

import pytest

from tests.integration.test_multiload import *  # noqa: F401,F403 - the shared tests, collected here
from tests.support.spark import suite_engine, suite_runner  # noqa: F401 - Spark and dbt instead of the session's engines

pytestmark = [pytest.mark.slow, pytest.mark.spark]

# DuckDB only in the shared suite (its DUCKDB_FOLLOW_UP says what covers them on other engines)
del test_ingested_at_offsets_are_instants_in_the_dedupe_order  # noqa: F821
del test_a_build_whose_entity_is_not_published_resolves_nothing  # noqa: F821
