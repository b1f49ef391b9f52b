"""The SQLMesh tests use the engine fixtures of tests/conftest.py (one PostgreSQL pool per worker)."""
