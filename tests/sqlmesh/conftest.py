"""Engine fixtures for the SQLMesh tests: the integration tests' engines, runners and Postgres servers."""

from tests.integration.conftest import engine, pg_servers, postgres_database, postgres_server, runner  # noqa: F401  (fixtures)
