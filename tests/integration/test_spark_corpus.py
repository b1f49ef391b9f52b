"""The dirty-data corpus on Apache Spark (local mode, parquet): the shared corpus suite
(tests/integration/test_corpus.py), every test of it, run with the dbt target on Spark.

One `dbt build` of the whole corpus in the test process's shared Spark process
(tests/support/spark.py), so this file can run beside another Spark file on another xdist
worker. Spark's outcomes are DuckDB's: no divergence is allowed here (docs/corpus.md, Spark).
"""

from __future__ import annotations

import pytest

from tests.integration.test_corpus import *  # noqa: F401,F403 - the shared tests, collected here
from tests.support.spark import suite_engine, suite_runner  # noqa: F401 - Spark and dbt instead of the session's engines

pytestmark = [pytest.mark.slow, pytest.mark.spark]
