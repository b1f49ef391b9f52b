"""The integration tests' engine fixtures (`engine`, `runner`, `postgres_server`, `pg_servers`,
`postgres_database`) live in tests/conftest.py, shared by every test package of a worker: one
PostgreSQL pool per worker."""
