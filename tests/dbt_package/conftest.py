"""A throwaway PostgreSQL server per available installation (see tests/support/pg.py)."""

from support.pg import postgres_server_fixture

postgres_server = postgres_server_fixture()
