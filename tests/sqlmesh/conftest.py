"""Engine fixtures for the SQLMesh tests: the integration tests' throwaway Postgres server."""

from tests.integration.conftest import postgres_database, postgres_server  # noqa: F401  (fixtures)
