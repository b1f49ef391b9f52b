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
