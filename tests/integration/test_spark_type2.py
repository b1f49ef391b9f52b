"""Type-2 history on Apache Spark (local mode, parquet): the shared suite
(tests/integration/test_type2.py), every test of it, run with the dbt target on Spark.

dbt's snapshot cannot change a parquet table, so on Spark the history is the `assay_history`
model (decision 0807): dbt's check strategy decides the versions, the next history is built
beside the stored one and swapped in. Three builds, the versions and the child's probe of the
current versions matched as on DuckDB. In the test process's shared Spark process.
"""

from __future__ import annotations

import shutil

import pytest

from tests.integration.test_type2 import *  # noqa: F401,F403 - the shared tests, collected here
from tests.support.spark import suite_engine, suite_runner  # noqa: F401 - Spark and dbt instead of the session's engines

pytestmark = [pytest.mark.slow, pytest.mark.spark]


@pytest.fixture(scope="module")
def type2_spec(tmp_path_factory):
    """The shop spec without its `grants`: open-source Spark SQL has no GRANT (decision 0822)."""
    spec = tmp_path_factory.mktemp("type2_spark_spec") / "shop"
    shutil.copytree(EXAMPLE, spec)
    entities = spec / "spec" / "entities.yml"
    text = entities.read_text()
    assert "    grants: {select: [reporter]}\n" in text
    entities.write_text(text.replace("    grants: {select: [reporter]}\n", ""))
    return spec
